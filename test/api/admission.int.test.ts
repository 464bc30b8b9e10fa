import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_WORKFLOWS } from "../../flows/index.js";
import type { AdmissionSettings } from "../../src/api/admission.js";
import { issueApiKey } from "../../src/api/auth/api-key.js";
import { loadConfig } from "../../src/config/load-config.js";
import type { TenorConfig } from "../../src/config/schema.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { createLogger } from "../../src/observability/logger.js";
import { createMetrics } from "../../src/observability/metrics.js";
import { createPlatformApi } from "../../src/roles/platform-api.js";
import { createPgPool } from "../../src/store/pg-pool.js";
import { sampleValue } from "../observability/metric-labels.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";
import { eventually } from "../support/role-process.js";

/**
 * Admission control on a real server and a real pool of one connection: once the test has held
 * the connection so long that the request waiting for it expects to wait past the bound, the next
 * is refused at once with 503, Retry-After and problem+json; a lagging event loop refuses too;
 * health and /metrics are never refused, and /readyz answers 503 `overloaded` exactly while
 * admission refuses every request.
 */
let db: TestDatabase;
let pool: pg.Pool;
let redis: Redis;
let server: Server;
let base: string;
let key: string;
let lag = 0;
let closeApi: () => Promise<void>;
let config: TenorConfig;
const prefix = testRedisPrefix(import.meta.url);
/**
 * Bound on the expected wait for the connection, in ms. With one connection and one request
 * waiting, the expected wait is how long the connection has been held.
 */
const POOL_WAIT_MS = 100;
const apiMetrics = createMetrics("api");

/** The Platform API on this file's pool (one connection), with `admission` and a scripted lag. */
function createApi(admission: AdmissionSettings, lagMs: () => number) {
  return createPlatformApi({
    settings: config.api,
    pool,
    redis,
    prefix,
    registry: new WorkflowRegistry(ALL_WORKFLOWS),
    logger: createLogger({ level: "error" }),
    readiness: {},
    health: { draining: false },
    metrics: apiMetrics,
    admission,
    eventLoopLagMs: lagMs,
  });
}

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPgPool(db.url, { applicationName: "tenor-admission-test", max: 1 });
  redis = new Redis(redisUrl(), { maxRetriesPerRequest: 3 });
  config = loadConfig({ env: { DATABASE_URL: db.url, REDIS_URL: redisUrl() } });
  const api = createApi(
    {
      maxPoolWaitMs: POOL_WAIT_MS,
      maxInFlight: 0,
      maxEventLoopUtilization: 0,
      maxEventLoopLagMs: 500,
      retryAfterSeconds: 2,
    },
    () => lag,
  );
  closeApi = api.close;
  key = (
    await issueApiKey(api.keys, {
      orgId: "adm",
      role: "operator",
      name: "adm-operator",
      subject: "operator@adm",
    })
  ).key;
  server = api.app.listen(0);
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.close();
  await closeApi?.();
  await pool?.end();
  await deleteRedisPrefix(prefix, redis).catch(() => undefined);
  redis?.disconnect();
  await db?.drop();
});

const list = () => fetch(`${base}/v1/executions`, { headers: { authorization: `Bearer ${key}` } });

describe("admission control", () => {
  it("refuses with 503 + Retry-After once the wait for the pool passes the bound, and serves the waiting request afterwards", async () => {
    expect((await list()).status).toBe(200);
    const held = await pool.connect();
    const waiting = list();
    await eventually("one request waiting for the connection", () => pool.waitingCount === 1);
    // Its expected wait grows with how long the connection has been held, until past the bound.
    await eventually(
      "the expected wait past the bound",
      async () => (await fetch(`${base}/readyz`)).status === 503,
    );
    const refused = await list();
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("2");
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect(await refused.json()).toMatchObject({ status: 503, code: "OVERLOADED", reason: "pool_queue" });
    // The api's own registry: the api role serves it on its health port, not on this one.
    const metrics = await apiMetrics.registry.metrics();
    expect(sampleValue(metrics, "tenor_api_admission_refusals_total", { reason: "pool_queue" })).toBe(1);
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    // Readiness says what admission does: not ready while every request would be refused.
    const unready = await fetch(`${base}/readyz`);
    expect([unready.status, await unready.json()]).toEqual([
      503,
      { status: "overloaded", reason: "pool_queue" },
    ]);
    held.release();
    expect((await waiting).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect((await list()).status).toBe(200);
  });

  it("refuses while the event loop lags past the bound", async () => {
    lag = 501;
    const refused = await list();
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ code: "OVERLOADED", reason: "event_loop_lag" });
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
    lag = 500;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect((await list()).status).toBe(200);
  });

  it("refuses past the requests in progress, counting only admitted ones, and counts none that ended", async () => {
    const bounded = createApi(
      {
        maxPoolWaitMs: 0,
        maxInFlight: 1,
        maxEventLoopUtilization: 0,
        maxEventLoopLagMs: 0,
        retryAfterSeconds: 1,
      },
      () => 0,
    );
    const boundedServer = bounded.app.listen(0);
    await new Promise((resolve) => boundedServer.once("listening", resolve));
    const url = `http://127.0.0.1:${(boundedServer.address() as AddressInfo).port}/v1/executions`;
    const get = () => fetch(url, { headers: { authorization: `Bearer ${key}` } });
    try {
      expect((await get()).status).toBe(200);
      expect((await get()).status).toBe(200);
      const held = await pool.connect();
      const first = get();
      await eventually("the first request waiting for the connection", () => pool.waitingCount === 1);
      const refused = await get();
      expect(refused.status).toBe(503);
      expect(await refused.json()).toMatchObject({ code: "OVERLOADED", reason: "in_flight" });
      expect(bounded.overload()).toBe("in_flight");
      held.release();
      expect((await first).status).toBe(200);
      expect(bounded.overload()).toBeNull();
      // The refused request and the finished ones left the count: the next is served.
      expect((await get()).status).toBe(200);
    } finally {
      boundedServer.close();
      await bounded.close();
    }
  });
});
