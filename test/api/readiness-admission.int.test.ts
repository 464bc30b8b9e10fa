import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../../src/api/auth/api-key.js";
import { PgApiKeys } from "../../src/store/pg-api-keys.js";
import { readyz, spawnApiProcess } from "../support/api-process.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { isStopped, killAllProcesses, type TestProcess, waitUntil } from "../support/processes.js";
import { deleteRedisPrefix, testRedisPrefix } from "../support/redis.js";

/**
 * Readiness and admission agree (docs/operations.md, "Start, drain, overload"), black-box against
 * a real api process with the default admission bounds (event-loop lag over 500 ms refuses). The
 * lag is made deterministically: the process is stopped (SIGSTOP) for STALL_MS, three times the
 * bound, so to it the loop was blocked that long.
 *
 * - A stall during startup is startup's: once the process says ready, its first request is
 *   admitted (it used to be refused with 503 OVERLOADED right after /readyz said 200).
 * - A stall once it serves: the requests it then answers are refused, and /readyz on both ports
 *   answers 503 `overloaded` with the same reason, until the lag has passed for both.
 */
const STALL_MS = 1_500;

let db: TestDatabase;
let api: TestProcess;
let base: string;
let health: string;
let key: string;
const prefix = testRedisPrefix(import.meta.url);

beforeAll(async () => {
  db = await createTestDatabase();
  key = (
    await issueApiKey(new PgApiKeys(db.pool), {
      orgId: "ready",
      role: "operator",
      name: "ready-operator",
      subject: "operator@ready",
    })
  ).key;
  ({
    process: api,
    base,
    health,
  } = await spawnApiProcess({ databaseUrl: db.url, prefix, env: { STOP_AT_END_OF_STARTUP: "1" } }));
});

afterAll(async () => {
  await killAllProcesses();
  await deleteRedisPrefix(prefix).catch(() => undefined);
  await db?.drop();
});

const list = () => fetch(`${base}/v1/executions`, { headers: { authorization: `Bearer ${key}` } });
/** The stimulus, not a wait for a state: the process stays stopped this long. */
const stall = () => new Promise((resolve) => setTimeout(resolve, STALL_MS));

describe("readiness and admission", () => {
  it("do not count a stall during startup: the first request after /readyz 200 is admitted", async () => {
    await api.waitFor(/"stopping":"startup"/);
    await waitUntil("the api stopped at the end of its startup", () => isStopped(api));
    await stall();
    api.signal("SIGCONT");
    const first = await waitUntil("the api's first answer past starting", async () => {
      const answer = await readyz(health);
      return answer.body.status === "starting" ? undefined : answer;
    });
    expect(first).toEqual({ status: 200, body: expect.objectContaining({ status: "ready" }) });
    const res = await list();
    expect(res.status, await res.clone().text()).toBe(200);
  });

  it("answer 503 together while the loop lags, with the same reason, and recover together", async () => {
    await waitUntil("the api ready", async () => (await readyz(health)).status === 200);
    api.signal("SIGSTOP");
    await waitUntil("the api stopped", () => isStopped(api));
    // Sent while it is stopped: the kernel queues them, the process answers them once it resumes.
    const answers = Promise.all([list(), readyz(health), readyz(base)]);
    await stall();
    api.signal("SIGCONT");
    const [refused, healthReadyz, publicReadyz] = await answers;
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ code: "OVERLOADED", reason: "event_loop_lag" });
    for (const answer of [healthReadyz, publicReadyz])
      expect(answer).toEqual({ status: 503, body: { status: "overloaded", reason: "event_loop_lag" } });
    await waitUntil("the api ready again", async () => (await readyz(health)).status === 200);
    expect((await list()).status).toBe(200);
  });
});
