import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../../src/api/auth/api-key.js";
import { PgApiKeys } from "../../src/store/pg-api-keys.js";
import { sampleValue } from "../observability/metric-labels.js";
import { readyz, spawnApiProcess } from "../support/api-process.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { killAllProcesses, waitUntil } from "../support/processes.js";
import { deleteRedisPrefix, testRedisPrefix } from "../support/redis.js";

/**
 * The pool bound of admission (`api.admission.maxPoolWaitMs`, default 250 ms) decides on the wait a
 * request can expect for a connection, not on how many requests wait: black-box against a real
 * api process with a pool of POOL_MAX connections and the default bound.
 *
 * - A burst of BURST cheap reads queues far more requests than there are connections, but each
 *   holds its connection for a round trip: every one is served (the former bound of 32 requests
 *   waiting refused some of them).
 * - Reads that hold every connection while a table lock blocks them make the wait of the few
 *   requests queued behind them long: a request arriving then is refused with 503 `pool_queue`
 *   and /readyz says `overloaded`; once the lock is released both recover. How long the reads
 *   have been blocked is read from pg_stat_activity, so the test waits for a state, not a time.
 *
 * The event-loop lag bound is off in this process: a loaded test machine must not turn the burst
 * into `event_loop_lag` refusals, which are another test's (readiness-admission.int.test.ts).
 */
const POOL_MAX = 4;
/**
 * Reads in the burst: many times the pool. A live run's read is two statements (the execution,
 * then the key lines it may be queued in), so 100 of them already expect about the 250 ms bound
 * on a loaded machine; 50 keep the queue at 12× the pool and the expected wait well inside it.
 */
const BURST = 50;
/** Requests queued behind the blocked connections: few, so only their wait can refuse. */
const QUEUED = 4;
/**
 * How long the blocked connections are held before the test looks: each has been held at least
 * this long, so the queued requests expect QUEUED × BLOCKED_MS ÷ POOL_MAX = 300 ms, past the
 * default bound of 250 ms.
 */
const BLOCKED_MS = 300;

let db: TestDatabase;
let base: string;
let health: string;
let key: string;
let executionId: string;
const prefix = testRedisPrefix(import.meta.url);

beforeAll(async () => {
  db = await createTestDatabase();
  key = (
    await issueApiKey(new PgApiKeys(db.pool), {
      orgId: "wait",
      role: "integrator",
      name: "wait-integrator",
      subject: "integrator@wait",
    })
  ).key;
  const dir = mkdtempSync(path.join(tmpdir(), "tenor-pool-wait-"));
  const config = path.join(dir, "api.yaml");
  writeFileSync(config, JSON.stringify({ api: { admission: { maxEventLoopLagMs: 0 } } }));
  ({ base, health } = await spawnApiProcess({
    databaseUrl: db.url,
    prefix,
    env: { TENOR_DATABASE_POOL_MAX: String(POOL_MAX), TENOR_CONFIG: config },
  }));
  await waitUntil("the api ready", async () => (await fetch(`${health}/readyz`)).ok);
  const started = await fetch(`${base}/v1/workflows/demo.steps/executions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ steps: 1 }),
  });
  expect(started.status, await started.clone().text()).toBe(202);
  executionId = ((await started.json()) as { id: string }).id;
});

afterAll(async () => {
  await killAllProcesses();
  await deleteRedisPrefix(prefix).catch(() => undefined);
  await db?.drop();
});

const read = () =>
  fetch(`${base}/v1/executions/${executionId}`, { headers: { authorization: `Bearer ${key}` } });

/** Sessions of the api's pool blocked on a lock for at least `ms` now (pg_stat_activity). */
async function blockedOnLock(ms: number): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'
        AND clock_timestamp() - query_start >= $1 * interval '1 millisecond'`,
    [ms],
  );
  return rows[0]?.n ?? 0;
}

const poolQueueRefusals = async () =>
  sampleValue(await (await fetch(`${health}/metrics`)).text(), "tenor_api_admission_refusals_total", {
    reason: "pool_queue",
  }) ?? 0;

describe("admission's pool bound", () => {
  it("serves a queue many times the pool when each request holds its connection briefly", async () => {
    const answers = await Promise.all(Array.from({ length: BURST }, () => read()));
    const statuses = answers.map((r) => r.status);
    const refused = answers.filter((r) => r.status !== 200);
    expect(
      statuses.filter((s) => s !== 200),
      refused.length > 0 ? await refused[0]!.text() : "",
    ).toEqual([]);
    expect(await poolQueueRefusals()).toBe(0);
  });

  it("refuses while the connections are held long, says so on /readyz, and recovers once released", async () => {
    const refusalsBefore = await poolQueueRefusals();
    const locker = await db.pool.connect();
    let admitted: Promise<Response>[] = [];
    try {
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE executions IN ACCESS EXCLUSIVE MODE");
      // POOL_MAX reads take the connections and block on the lock; QUEUED more wait for one.
      admitted = Array.from({ length: POOL_MAX + QUEUED }, () => read());
      // The queued requests' expected wait grows with how long the connections have been held.
      await waitUntil(
        `the pool's connections blocked on the lock for ${BLOCKED_MS} ms`,
        async () => (await blockedOnLock(BLOCKED_MS)) === POOL_MAX,
      );
      const overloaded = { status: 503, body: { status: "overloaded", reason: "pool_queue" } };
      expect(await readyz(health)).toEqual(overloaded);
      expect(await readyz(base)).toEqual(overloaded);
      const refused = await read();
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(await refused.json()).toMatchObject({ code: "OVERLOADED", reason: "pool_queue" });
      expect(await poolQueueRefusals()).toBe(refusalsBefore + 1);
      await locker.query("COMMIT");
      expect((await Promise.all(admitted)).map((r) => r.status)).toEqual(
        Array.from({ length: POOL_MAX + QUEUED }, () => 200),
      );
    } finally {
      await locker.query("ROLLBACK").catch(() => undefined);
      locker.release();
      await Promise.allSettled(admitted);
    }
    await waitUntil("the api ready again", async () => (await readyz(health)).status === 200);
    expect(await readyz(base)).toEqual({ status: 200, body: expect.objectContaining({ status: "ready" }) });
    expect((await read()).status).toBe(200);
  });
});
