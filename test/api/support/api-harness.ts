import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Express } from "express";
import type { Redis } from "ioredis";
import type { Pool } from "pg";
import request from "supertest";
import type { ApiSettings } from "../../../src/api/api-deps.js";
import { issueApiKey } from "../../../src/api/auth/api-key.js";
import type { ApiRole } from "../../../src/auth/api-roles.js";
import { loadConfig } from "../../../src/config/load-config.js";
import { WorkflowRegistry } from "../../../src/engine/registry.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createPlatformApi } from "../../../src/roles/platform-api.js";
import { createPgPool } from "../../../src/store/pg-pool.js";
import { createRedisConnection } from "../../../src/transport/redis-connection.js";
import { applicationRoutes } from "../../../workers/api-routes.js";
import { createTestDatabase, type TestDatabase } from "../../support/database.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../../support/redis.js";
import { TEST_KEYRING } from "../../webhooks/support.js";
import { API_TEST_WORKFLOWS } from "../fixtures/api-workflows.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

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
} as const satisfies Record<string, { org: string | null; role: ApiRole; subject?: string }>;
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
  as(principal: PrincipalName): {
    get(url: string): request.Test;
    post(url: string): request.Test;
    put(url: string): request.Test;
  };
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
  const db = await createTestDatabase();
  const prefix = testRedisPrefix(file);
  const dir = mkdtempSync(path.join(tmpdir(), "tenor-api-"));
  const configFile = path.join(dir, "config.yaml");
  writeFileSync(
    configFile,
    JSON.stringify({
      durable: {
        lock: { lockDurationMs: 2000, stalledIntervalMs: 1000 },
        sweep: { intervalMs: options.sweepIntervalMs ?? 500, graceMs: 1000 },
      },
      // Tests poll quickly; the rate limit has its own test with a replica of small budget.
      api: { maxPreferWaitSeconds: 5, rateLimit: { max: 1_000_000, windowSeconds: 60 } },
    }),
  );
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl(),
    TENOR_REDIS_PREFIX: prefix,
    TENOR_CONFIG: configFile,
  };
  const runner = await spawnRunner(env);
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
  const keys = {} as Record<PrincipalName, string>;
  const keyIds = {} as Record<PrincipalName, string>;
  for (const [name, p] of Object.entries(PRINCIPALS) as [
    PrincipalName,
    { org: string | null; role: ApiRole; subject?: string },
  ][]) {
    // Each principal is its own person unless it names another's subject.
    const issued = await issueApiKey(apiKeys, {
      orgId: p.org,
      role: p.role,
      name,
      subject: p.subject ?? name,
    });
    keys[name] = issued.key;
    keyIds[name] = issued.record.id;
  }
  const as: ApiHarness["as"] = (principal) => ({
    get: (url) => request(app).get(url).set("authorization", `Bearer ${keys[principal]}`),
    post: (url) => request(app).post(url).set("authorization", `Bearer ${keys[principal]}`),
    put: (url) => request(app).put(url).set("authorization", `Bearer ${keys[principal]}`),
  });
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
      runner.kill("SIGTERM");
      await new Promise((r) => (runner.exitCode !== null ? r(null) : runner.once("exit", r)));
      await closeApi().catch(() => undefined);
      for (const close of replicas) await close().catch(() => undefined);
      await deleteRedisPrefix(prefix, redis).catch(() => undefined);
      await Promise.allSettled([redis.quit(), pool.end()]);
      await db.drop();
    },
  };
}

async function spawnRunner(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/api/fixtures/api-runner.ts"], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`api-runner not ready in 30 s:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('"ready":true')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`api-runner exited (${code}) before it was ready:\n${output}`));
    });
  });
  return child;
}
