import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../../src/api/auth/api-key.js";
import { PgApiKeys } from "../../src/store/pg-api-keys.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { freePort } from "../support/ports.js";
import { waitUntil } from "../support/processes.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";
import { type RoleProcess, spawnRole } from "../support/role-process.js";

/**
 * The default per-key rate limit (README, "Rate limits") against the client patterns the README
 * documents, black-box on a real api process with no `api.rateLimit` configured:
 *
 * - POLLING: 50 executions started, then each read once a second. One window of it (50 × the
 *   window's seconds reads, plus the starts) is sent as fast as the test can: a burst is harder on
 *   a fixed window than the paced pattern, so if the burst is admitted the pattern is.
 * - CLOSED_LOOP: 100 clients, each starting its next run with `Prefer: wait` when its last one
 *   answered, runs of 0.5 s: 200 requests a second. The budget covers one window of it, and the
 *   request past the budget is refused with 429 RATE_LIMITED and Retry-After.
 *
 * Admission control is off here (its bounds are another test's): a slow test machine must not turn
 * these requests into 503s.
 */
const POLLING = { executions: 50, readsPerSecond: 1 };
const CLOSED_LOOP = { clients: 100, runSeconds: 0.5 };
/** Requests in flight at once: enough to outpace any pattern's pacing. */
const CONCURRENCY = 16;

let db: TestDatabase;
let api: RoleProcess;
let base: string;
let keys: PgApiKeys;
const prefix = testRedisPrefix(import.meta.url);

beforeAll(async () => {
  db = await createTestDatabase();
  keys = new PgApiKeys(db.pool);
  const dir = mkdtempSync(path.join(tmpdir(), "tenor-rate-limit-"));
  const config = path.join(dir, "api.yaml");
  writeFileSync(config, JSON.stringify({ api: { admission: { maxPoolWaitMs: 0, maxEventLoopLagMs: 0 } } }));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  api = spawnRole({
    DAPI_ROLE: "api",
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl(),
    TENOR_REDIS_PREFIX: prefix,
    TENOR_API_PORT: String(port),
    TENOR_CONFIG: config,
  });
  await waitUntil("api ready", async () => (await fetch(`${base}/readyz`)).ok);
});

afterAll(async () => {
  api?.kill("SIGKILL");
  await api?.exited;
  await deleteRedisPrefix(prefix).catch(() => undefined);
  await db?.drop();
});

/** A key of its own: the limit counts per key, so each test starts a fresh window. */
async function freshKey(name: string): Promise<string> {
  return (await issueApiKey(keys, { orgId: "rl", role: "integrator", name, subject: `${name}@rl` })).key;
}

/** The budget this api announces (`RateLimit-Policy: <limit>;w=<seconds>`, IETF draft 7). */
function policyOf(res: Response): { limit: number; windowSeconds: number } {
  const match = /^(\d+);w=(\d+)$/.exec(res.headers.get("ratelimit-policy") ?? "");
  if (!match) throw new Error(`no RateLimit-Policy header: ${res.headers.get("ratelimit-policy")}`);
  return { limit: Number(match[1]), windowSeconds: Number(match[2]) };
}

/** Requests left in the window after this one (`RateLimit: limit=…, remaining=…, reset=…`). */
function remainingOf(res: Response): number {
  return Number(/remaining=(\d+)/.exec(res.headers.get("ratelimit") ?? "")?.[1] ?? Number.NaN);
}

/** Runs `requests` with CONCURRENCY in flight; every response's status, in order of completion. */
async function burst(requests: (() => Promise<Response>)[]): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const res = await (requests[next++] as () => Promise<Response>)();
      await res.arrayBuffer();
      statuses.push(res.status);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return statuses;
}

describe("the default rate limit", () => {
  it("admits a window of the polling pattern: 50 executions, each read once a second", async () => {
    const key = await freshKey("polling");
    const headers = { authorization: `Bearer ${key}` };
    const first = await fetch(`${base}/v1/executions`, { headers });
    expect(first.status).toBe(200);
    const { windowSeconds } = policyOf(first);
    const starts = await Promise.all(
      Array.from({ length: POLLING.executions }, (_, i) =>
        fetch(`${base}/v1/workflows/demo.provision-wallet/executions`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify({ purpose: `poll-${i}` }),
        }),
      ),
    );
    expect(starts.map((res) => res.status)).toEqual(Array(POLLING.executions).fill(202));
    const ids = await Promise.all(starts.map(async (res) => ((await res.json()) as { id: string }).id));
    const readsPerWindow = POLLING.readsPerSecond * windowSeconds;
    const reads = Array.from({ length: readsPerWindow }, () => ids).flatMap((round) =>
      round.map((id) => () => fetch(`${base}/v1/executions/${id}`, { headers })),
    );
    const statuses = await burst(reads);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
  });

  it("admits a window of 100 closed-loop clients with Prefer: wait, and refuses the request past the budget", async () => {
    // A window that turns over mid-burst resets the count: then the burst is tried on a fresh key.
    for (let attempt = 1; ; attempt++) {
      const key = await freshKey(`closed-loop-${attempt}`);
      const headers = { authorization: `Bearer ${key}` };
      const first = await fetch(`${base}/v1/executions?limit=1`, { headers });
      expect(first.status).toBe(200);
      const { limit, windowSeconds } = policyOf(first);
      expect(limit).toBeGreaterThanOrEqual((CLOSED_LOOP.clients / CLOSED_LOOP.runSeconds) * windowSeconds);
      let lowest = remainingOf(first);
      let turnedOver = false;
      const read = async () => {
        const res = await fetch(`${base}/v1/executions?limit=1`, { headers });
        const remaining = remainingOf(res);
        if (res.status === 200 && remaining > lowest + CONCURRENCY) turnedOver = true;
        if (res.status === 200) lowest = Math.min(lowest, remaining);
        return res;
      };
      // Up to the budget (the first request spent one), then CONCURRENCY more past it.
      const statuses = await burst(Array.from({ length: limit - 1 + CONCURRENCY }, () => read));
      if (turnedOver && attempt < 3) continue;
      expect(statuses.filter((status) => status === 200)).toHaveLength(limit - 1);
      expect(statuses.filter((status) => status === 429)).toHaveLength(CONCURRENCY);
      const refused = await fetch(`${base}/v1/executions?limit=1`, { headers });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(windowSeconds);
      expect(await refused.json()).toMatchObject({ code: "RATE_LIMITED", details: { limit, windowSeconds } });
      return;
    }
  });
});
