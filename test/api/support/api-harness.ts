import type { Express } from "express";
import type { Redis } from "ioredis";
import type { Pool } from "pg";
import type { ApiSettings } from "../../../src/api/api-deps.js";
import { loadConfig } from "../../../src/config/load-config.js";
import { WorkflowRegistry } from "../../../src/engine/registry.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createPlatformApi } from "../../../src/roles/platform-api.js";
import { createPgPool } from "../../../src/store/pg-pool.js";
import { createRedisConnection } from "../../../src/transport/redis-connection.js";
import { applicationRoutes } from "../../../workers/api-routes.js";
import { type AppClient, appClient, issueTestKeys, type TestPrincipal } from "../../support/api-client.js";
import { writeTestConfig } from "../../support/config-file.js";
import type { TestDatabase } from "../../support/database.js";
import { startFixtureRunner } from "../../support/role-process.js";
import { createTestStores } from "../../support/test-stores.js";
import { TEST_KEYRING } from "../../webhooks/support.js";
import { API_TEST_WORKFLOWS } from "../fixtures/api-workflows.js";

/** The principals every API test file gets: two organisations, every role. */
const PRINCIPALS = {
  integrator: { org: "org-a", role: "integrator" },
  integrator2: { org: "org-a", role: "integrator" },
  approver: { org: "org-a", role: "approver" },
  approver2: { org: "org-a", role: "approver" },
  operator: { org: "org-a", role: "operator" },
  admin: { org: "org-a", role: "admin" },
  otherIntegrator: { org: "org-b", role: "integrator" },
  otherApprover: { org: "org-b", role: "approver" },
  otherOperator: { org: "org-b", role: "operator" },
  otherAdmin: { org: "org-b", role: "admin" },
  /** A second key of the person behind `approver` (same subject). */
  approverAlias: { org: "org-a", role: "approver", subject: "approver" },
  /** A second key of the person behind `integrator`, who may also approve. */
  integratorAsApprover: { org: "org-a", role: "approver", subject: "integrator" },
  platformOperator: { org: null, role: "platform-operator" },
  platformAdmin: { org: null, role: "platform-admin" },
} as const satisfies Record<string, TestPrincipal>;
export type PrincipalName = keyof typeof PRINCIPALS;

/**
 * The Platform API app in the test process (supertest against it) on a database and Redis prefix
 * of the file's own, with a real runner process advancing the executions.
 */
export interface ApiHarness {
  app: Express;
  db: TestDatabase;
  pool: Pool;
  /** Bearer keys by principal. */
  keys: Record<PrincipalName, string>;
  keyIds: Record<PrincipalName, string>;
  /** A supertest agent factory sending `principal`'s key. */
  as: AppClient<PrincipalName>;
  /** Polls GET /v1/executions/{id} until `predicate` holds; throws with the last body on timeout. */
  waitFor(
    id: string,
    predicate: (body: Record<string, unknown>) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** The Redis connection and key prefix the app uses. */
  redis: Redis;
  prefix: string;
  /** Another api replica on the same database and Redis prefix, with `api.*` settings overridden. */
  replica(settings: Partial<ApiSettings>): Express;
  stop(): Promise<void>;
}

/** `sweepIntervalMs`: how often the runner's sweep repairs lost wake-ups (default 500 ms). */
export async function startApiHarness(
  file: string,
  options: { sweepIntervalMs?: number } = {},
): Promise<ApiHarness> {
  const stores = await createTestStores(file);
  const { db, prefix } = stores;
  const configFile = writeTestConfig("api", {
    durable: {
      lock: { lockDurationMs: 2000, stalledIntervalMs: 1000 },
      sweep: { intervalMs: options.sweepIntervalMs ?? 500, graceMs: 1000 },
    },
    // Tests poll quickly; the rate limit has its own test with a replica of small budget.
    api: { maxPreferWaitSeconds: 5, rateLimit: { max: 1_000_000, windowSeconds: 60 } },
  });
  const env = { ...stores.env, TENOR_CONFIG: configFile.file };
  const runner = await startFixtureRunner("api-runner", "test/api/fixtures/api-runner.ts", env, 30_000);
  const config = loadConfig({ env });
  const logger = createLogger({ level: "error" });
  const pool = createPgPool(db.url, { applicationName: "tenor-api-test", max: 10 });
  const redis: Redis = createRedisConnection(config.redisUrl, "producer");
  const registry = new WorkflowRegistry(API_TEST_WORKFLOWS);
  const {
    app,
    keys: apiKeys,
    close: closeApi,
  } = createPlatformApi({
    settings: config.api,
    pool,
    redis,
    prefix,
    registry,
    // The release's own routes (assets, organisations) next to the platform's.
    routes: applicationRoutes,
    logger,
    readiness: { postgresql: async () => void (await pool.query("SELECT 1")) },
    health: { draining: false },
    // The api role's keyring: new subscriptions' secrets are sealed as in production.
    webhooks: { allowPrivateAddresses: false, keyring: TEST_KEYRING },
  });
  // Each principal is its own person unless it names another's subject.
  const { keys, keyIds } = await issueTestKeys<PrincipalName>(apiKeys, PRINCIPALS);
  const as = appClient(app, keys);
  const replicas: (() => Promise<void>)[] = [];
  return {
    app,
    db,
    pool,
    keys,
    keyIds,
    as,
    redis,
    prefix,
    replica(settings) {
      const replica = createPlatformApi({
        settings: { ...config.api, ...settings },
        pool,
        redis,
        prefix,
        registry,
        routes: applicationRoutes,
        logger,
        readiness: {},
        health: { draining: false },
      });
      replicas.push(replica.close);
      return replica.app;
    },
    async waitFor(id, predicate, what, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      let last: Record<string, unknown> = {};
      for (;;) {
        const res = await as("operator").get(`/v1/executions/${id}`);
        last = res.body;
        if (res.status === 200 && predicate(last)) return last;
        if (Date.now() > deadline)
          throw new Error(`execution ${id} never reached ${what}: ${JSON.stringify(last)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      runner.signal("SIGTERM");
      await runner.exit;
      await closeApi().catch(() => undefined);
      for (const close of replicas) await close().catch(() => undefined);
      await Promise.allSettled([redis.quit(), pool.end()]);
      await stores.drop();
    },
  };
}
