import type { Redis } from "ioredis";
import type pg from "pg";
import { forEachLimit, pollUntil, sleep } from "../lib/concurrency.js";
import { RunnerProcess } from "../lib/runner-process.js";
import { TenorSystem } from "../systems/tenor.js";
import { measure, notMeasured, type Workload } from "./types.js";

/** MEMORY USAGE of every key under `prefix`, split into the events stream and the rest. */
async function prefixBytes(
  redis: Redis,
  prefix: string,
): Promise<{ keys: number; bytes: number; events: number }> {
  let cursor = "0";
  let bytes = 0;
  let events = 0;
  let keys = 0;
  do {
    const [next, batch] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    cursor = next;
    if (batch.length === 0) continue;
    const pipeline = redis.pipeline();
    for (const key of batch) pipeline.memory("USAGE", key, "SAMPLES", "0");
    const replies = (await pipeline.exec()) ?? [];
    for (const [i, [, value]] of replies.entries()) {
      const size = Number(value ?? 0);
      keys++;
      if ((batch[i] as string).endsWith(":events")) events += size;
      else bytes += size;
    }
  } while (cursor !== "0");
  return { keys, bytes, events };
}

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info("memory");
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
}

async function startParked(tenor: TenorSystem, pool: pg.Pool, count: number, expectedTotal: number) {
  await forEachLimit(count, 100, async () => {
    await tenor.client.start({ workflow: "bench.park", input: { steps: 0 } });
  });
  await pollUntil(
    `${expectedTotal} executions to be waiting`,
    async () => {
      const { rows } = await pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM executions WHERE status = 'waiting'",
      );
      return (rows[0]?.n ?? 0) >= expectedTotal ? true : null;
    },
    { everyMs: 200, timeoutMs: 180_000 },
  );
}

/**
 * W7: what one parked workflow (a signal wait with no deadline) costs while it waits: heap of a
 * separate runner process after full GCs, and Redis bytes under the run's prefix (MEMORY USAGE of
 * every key, the events stream apart: BullMQ caps it at ~10,000 entries whatever the number of
 * waiting workflows). INFO used_memory deltas are recorded too, but the Redis is shared.
 */
export const w7Memory: Workload = {
  id: "W7",
  title: "memory per waiting workflow",
  async run(ctx) {
    const count = ctx.quick ? 2_000 : 10_000;
    const warmup = 200;
    const url = await ctx.env.freshDatabase("w7");
    const pool = ctx.env.pool(url, 4);
    const prefix = ctx.env.prefix("w7-tenor");
    const tenorResult = await measure(ctx, "tenor", async () => {
      const runner = await RunnerProcess.spawn({
        databaseUrl: url,
        redisUrl: ctx.env.redisUrl,
        prefix,
        durable: {},
      });
      const client = await TenorSystem.start({
        databaseUrl: url,
        redisUrl: ctx.env.redisUrl,
        prefix,
        runner: false,
      });
      try {
        await startParked(client, pool, warmup, warmup);
        await sleep(500);
        const before = await runner.memory();
        const redisBefore = await prefixBytes(ctx.env.redis, prefix);
        const usedBefore = await usedMemory(ctx.env.redis);
        await startParked(client, pool, count, warmup + count);
        await sleep(1_000);
        const after = await runner.memory();
        const redisAfter = await prefixBytes(ctx.env.redis, prefix);
        const usedAfter = await usedMemory(ctx.env.redis);
        return {
          status: "ok",
          figures: {
            runnerBytesPerWaiting: (after.heapUsed - before.heapUsed) / count,
            redisBytesPerWaiting: (redisAfter.bytes - redisBefore.bytes) / count,
          },
          details: {
            runnerRssBytesPerWaiting: (after.rss - before.rss) / count,
            runnerHeapBefore: before.heapUsed,
            runnerHeapAfter: after.heapUsed,
            redisKeysBefore: redisBefore.keys,
            redisKeysAfter: redisAfter.keys,
            redisEventsStreamBytes: redisAfter.events,
            redisUsedMemoryDeltaPerWaiting: (usedAfter - usedBefore) / count,
          },
        } as const;
      } finally {
        await runner.stop();
        await client.stop();
      }
    });
    await pool.end();
    return {
      id: "W7",
      title: "memory per waiting workflow",
      status: "ok",
      params: { parked: count, warmupParked: warmup, wait: "waitForSignal with no deadline" },
      systems: {
        floor: notMeasured("a parked workflow at the floor is a row; nothing to compare"),
        bullmq: notMeasured("a plain BullMQ chain has no durable wait primitive"),
        dbos: notMeasured("DBOS keeps a waiting workflow's promise in the process; not measured here"),
        tenor: tenorResult,
      },
    };
  },
};
