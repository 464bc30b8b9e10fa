import { describe, expect, it } from "vitest";
import { ConfigError, configSchema, loadConfig } from "../../src/config/index.js";

/**
 * The parsed default configuration, pinned: a change to how a default is stated (the nested
 * objects' defaults come from their fields' own defaults) must not change what a role receives.
 */

const env = {
  DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/tenor",
  REDIS_URL: "redis://127.0.0.1:6379",
};

function issuesOf(yaml: string): { key: string; value: unknown; rule: string }[] {
  try {
    loadConfig({ env: { ...env, TENOR_CONFIG: "/etc/tenor.yaml" }, readFile: () => yaml });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [...(error as ConfigError).issues];
  }
  throw new Error("expected a ConfigError");
}

describe("configuration defaults", () => {
  it("parses the minimal input to the pinned default configuration", () => {
    const parsed = configSchema.parse({ databaseUrl: env.DATABASE_URL, redisUrl: env.REDIS_URL });
    expect(parsed).toMatchInlineSnapshot(`
      {
        "api": {
          "admission": {
            "maxEventLoopLagMs": 500,
            "maxEventLoopUtilization": 0,
            "maxInFlight": 0,
            "maxPoolWaitMs": 250,
            "retryAfterSeconds": 1,
          },
          "bodyLimitBytes": 1048576,
          "healthPort": 3003,
          "http": {
            "headersTimeoutMs": 66000,
            "keepAliveTimeoutMs": 65000,
            "requestTimeoutMs": 300000,
          },
          "idempotencyTtlSeconds": 86400,
          "maxPreferWaitSeconds": 30,
          "noMutationThresholdSeconds": 3600,
          "port": 3000,
          "rateLimit": {
            "max": 2000,
            "windowSeconds": 10,
          },
          "waitFallbackPollMs": 1000,
        },
        "assetTemplates": [],
        "chains": [],
        "database": {
          "namedStatements": true,
          "poolMax": 20,
        },
        "databaseUrl": "postgresql://postgres@127.0.0.1:5432/tenor",
        "durable": {
          "confirmationWatcher": {
            "intervalMs": 250,
          },
          "keyed": {
            "batchSize": 128,
            "concurrency": 4,
            "graceMs": 5000,
            "leaseMs": 10000,
            "repairIntervalMs": 1000,
          },
          "liveness": {
            "checkIntervalMs": 250,
          },
          "lock": {
            "lockDurationMs": 4000,
            "stalledIntervalMs": 3000,
          },
          "maxStoredValueBytes": 8388608,
          "nonceRecovery": {
            "intervalMs": 60000,
          },
          "operations": {
            "batchSize": 500,
            "intervalMs": 1000,
            "maxItems": 100000,
          },
          "recovery": {
            "baseDelayMs": 1000,
            "maxAttempts": 10,
            "maxDelayMs": 60000,
            "maxDurationMs": 3600000,
          },
          "retention": {
            "batchSize": 500,
            "days": 30,
          },
          "runnerConcurrency": 100,
          "sharding": {
            "livenessWindowMs": 10000,
            "refreshIntervalMs": 2000,
            "shardCount": 64,
          },
          "sweep": {
            "graceMs": 10000,
            "intervalMs": 5000,
          },
        },
        "evidence": {},
        "indexer": {
          "batchBlocks": 100,
          "healthPort": 3002,
          "leaseMs": 30000,
          "pollIntervalMs": 1000,
          "rangeBlocks": 2000,
        },
        "logLevel": "info",
        "monitoring": {
          "blockchainHealthCollector": {
            "intervalSeconds": 60,
          },
          "rollups": {
            "intervalSeconds": 300,
          },
        },
        "organisations": {
          "abandonedDeploymentsIntervalMs": 60000,
        },
        "redisCluster": false,
        "redisPrefix": "tenor",
        "redisUrl": "redis://127.0.0.1:6379",
        "runner": {
          "healthPort": 3001,
        },
        "shutdown": {
          "graceMs": 10000,
          "readinessDelayMs": 0,
        },
        "signers": [],
        "startup": {
          "initialDelayMs": 500,
          "maxDelayMs": 10000,
          "relaunchBudgetMs": 60000,
        },
        "webhooks": {
          "allowPrivateAddresses": false,
          "backoff": {
            "baseMs": 1000,
            "maxMs": 3600000,
          },
          "concurrency": 8,
          "maxAttempts": 8,
          "plaintextSecrets": false,
          "pollIntervalMs": 1000,
          "replayWindowSeconds": 300,
          "secretKeys": [],
          "timeoutMs": 10000,
        },
      }
    `);
  });

  it("loads the same defaults from the environment alone", () => {
    const parsed = configSchema.parse({ databaseUrl: env.DATABASE_URL, redisUrl: env.REDIS_URL });
    expect(loadConfig({ env })).toEqual(parsed);
  });

  it("fills an empty nested object from its fields' defaults", () => {
    const empty = configSchema.parse({
      databaseUrl: env.DATABASE_URL,
      redisUrl: env.REDIS_URL,
      api: {},
      durable: { sharding: {} },
      webhooks: { backoff: {} },
    });
    const omitted = configSchema.parse({ databaseUrl: env.DATABASE_URL, redisUrl: env.REDIS_URL });
    expect(empty).toEqual(omitted);
  });

  it("reports bad nested keys with unchanged messages", () => {
    expect(
      [
        "api:\n  rateLimit:\n    max: 0\n",
        "api:\n  http:\n    headersTimeoutMs: 65000\n",
        "api:\n  unknownKey: 1\n",
        "api: 7\n",
        "shutdown:\n  readinessDelayMs: 10000\n",
        "durable:\n  sharding:\n    refreshIntervalMs: 5000\n",
        "durable:\n  keyed:\n    leaseMs: 1\n",
        "webhooks:\n  backoff:\n    baseMs: 5000\n    maxMs: 1000\n",
        "monitoring:\n  blockchainHealthCollector:\n    intervalSeconds: 7\n",
        "evidence:\n  signingKey: 3\n",
      ].map(issuesOf),
    ).toMatchInlineSnapshot(`
      [
        [
          {
            "key": "api.rateLimit.max",
            "rule": "must be ≥ 1",
            "value": 0,
          },
        ],
        [
          {
            "key": "api.http.headersTimeoutMs",
            "rule": "must be > api.http.keepAliveTimeoutMs (65000)",
            "value": 65000,
          },
        ],
        [
          {
            "key": "api.unknownKey",
            "rule": "is not a known configuration key",
            "value": 1,
          },
        ],
        [
          {
            "key": "api",
            "rule": "Invalid input: expected object, received number",
            "value": 7,
          },
        ],
        [
          {
            "key": "shutdown.readinessDelayMs",
            "rule": "must be < shutdown.graceMs (10000)",
            "value": 10000,
          },
        ],
        [
          {
            "key": "durable.sharding.livenessWindowMs",
            "rule": "must be ≥ 3 × durable.sharding.refreshIntervalMs (15000)",
            "value": undefined,
          },
        ],
        [
          {
            "key": "durable.keyed.leaseMs",
            "rule": "must be ≥ 200",
            "value": 1,
          },
        ],
        [
          {
            "key": "webhooks.backoff.maxMs",
            "rule": "must be ≥ webhooks.backoff.baseMs (5000)",
            "value": 1000,
          },
        ],
        [
          {
            "key": "monitoring.blockchainHealthCollector.intervalSeconds",
            "rule": "≥ 60 must be whole minutes (a multiple of 60); below 60 must divide 60",
            "value": 7,
          },
        ],
        [
          {
            "key": "evidence.signingKey",
            "rule": "must be { env: NAME } or { file: /path }",
            "value": 3,
          },
        ],
      ]
    `);
  });
});
