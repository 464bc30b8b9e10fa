/**
 * Probe behind docs/performance.md, "Where the time goes": PostgreSQL statements and Redis
 * commands (and pipelines, each one round trip) spent per start (W3's path), per 10-step workflow
 * (W1/W2's fixed cost and per-step cost) and per child of a fan-out of 100 (W4). Counts are taken
 * on the client side by wrapping `pg.Client.prototype.query` and ioredis' `sendCommand`, so they
 * include the runner's background work (liveness, sweeps) while the probe runs: each figure is
 * measured on a batch large enough to make that noise small.
 *
 * Usage: node --import tsx bench/probes/round-trips.ts
 * Env: BENCH_DATABASE_URL, BENCH_REDIS_URL (as `npm run bench`). Creates and drops its own database.
 */
import { Redis } from "ioredis";
import pg from "pg";
import { BenchEnv } from "../lib/bench-env.js";
import { TenorSystem } from "../systems/tenor.js";

const counts = { statements: 0, redisCommands: 0, redisPipelines: 0 };
const originalQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  counts.statements++;
  return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof originalQuery;
const originalSend = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<Redis["sendCommand"]>) {
  counts.redisCommands++;
  return originalSend.apply(this, args);
};
const originalExec = (Redis.prototype as unknown as { pipeline: () => { exec: () => unknown } }).pipeline;
(Redis.prototype as unknown as { pipeline: (...a: unknown[]) => unknown }).pipeline = function (
  this: Redis,
  ...args: unknown[]
) {
  counts.redisPipelines++;
  return (originalExec as (...a: unknown[]) => unknown).apply(this, args);
};

type Counts = typeof counts;
type Snapshot = Counts & { at: number };
const KEYS = ["statements", "redisCommands", "redisPipelines"] as const;
/** What the runner sends while idle (liveness, sweeps, schedules), per ms; subtracted from each figure. */
let background: Counts = { statements: 0, redisCommands: 0, redisPipelines: 0 };

function snapshot(): Snapshot {
  return { ...counts, at: performance.now() };
}
function per(before: Snapshot, n: number) {
  const ms = performance.now() - before.at;
  const figure = (k: (typeof KEYS)[number]) =>
    Number(((counts[k] - before[k] - background[k] * ms) / n).toFixed(2));
  return Object.fromEntries(KEYS.map((k) => [k, figure(k)]));
}
async function measureBackground(ms: number): Promise<void> {
  const before = snapshot();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const elapsed = performance.now() - before.at;
  background = {
    statements: (counts.statements - before.statements) / elapsed,
    redisCommands: (counts.redisCommands - before.redisCommands) / elapsed,
    redisPipelines: (counts.redisPipelines - before.redisPipelines) / elapsed,
  };
}

const env = BenchEnv.fromEnv(process.env);
const results: Record<string, unknown> = {};
try {
  await env.prepareTemplate();
  {
    // Each phase has its own database: the runner's sweep would otherwise run the starts' executions.
    const url = await env.freshDatabase("roundtrips_starts");
    const tenor = await TenorSystem.start({
      databaseUrl: url,
      redisUrl: env.redisUrl,
      prefix: env.prefix("rt-starts"),
      runner: false,
    });
    const n = 1_000;
    await Promise.all(
      Array.from({ length: 50 }, () =>
        tenor.client.start({ workflow: "bench.noop-chain", input: { steps: 10 } }),
      ),
    );
    const before = snapshot();
    for (let i = 0; i < n; i += 100) {
      await Promise.all(
        Array.from({ length: 100 }, () =>
          tenor.client.start({ workflow: "bench.noop-chain", input: { steps: 10 } }),
        ),
      );
    }
    results["start (100 concurrent)"] = per(before, n);
    await tenor.stop();
  }
  {
    const url = await env.freshDatabase("roundtrips_runs");
    const tenor = await TenorSystem.start({
      databaseUrl: url,
      redisUrl: env.redisUrl,
      prefix: env.prefix("rt-runs"),
    });
    await tenor.chain(1);
    await measureBackground(3_000);
    results["runner idle, per second"] = Object.fromEntries(
      KEYS.map((k) => [k, Number((background[k] * 1000).toFixed(1))]),
    );
    for (const steps of [1, 10]) {
      const n = 50;
      const before = snapshot();
      for (let i = 0; i < n; i++) await tenor.chain(steps);
      results[`serial workflow of ${steps} step(s), start to the client's checked result`] = per(before, n);
    }
    const before = snapshot();
    await tenor.run("bench.fanout-parent", { children: 100 }, { sum: 4950 });
    results["fan-out of 100: per child (parent's work included)"] = per(before, 100);
    await tenor.stop();
  }
  console.log(JSON.stringify(results, null, 2));
} finally {
  await env.cleanup();
}
