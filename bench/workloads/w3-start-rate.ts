import { forEachLimit, nowMs } from "../lib/concurrency.js";
import { summarize } from "../lib/stats.js";
import { BullmqChainSystem } from "../systems/bullmq-chain.js";
import { FloorSystem } from "../systems/floor.js";
import { TenorSystem } from "../systems/tenor.js";
import { measure, notMeasured, type SystemResult, type Workload } from "./types.js";

/** Start calls in flight: an API role serving many clients at once. */
const CONCURRENCY = 100;

async function startRate(count: number, start: () => Promise<void>): Promise<SystemResult> {
  await forEachLimit(Math.min(200, count), CONCURRENCY, start); // warm-up
  const latencies: number[] = [];
  const begun = nowMs();
  await forEachLimit(count, CONCURRENCY, async () => {
    const t = nowMs();
    await start();
    latencies.push(nowMs() - t);
  });
  const wallMs = nowMs() - begun;
  const latency = summarize(latencies);
  return {
    status: "ok",
    figures: { startsPerSec: count / (wallMs / 1000), latencyMsP50: latency.p50, latencyMsP99: latency.p99 },
    details: { wallMs, starts: count },
  };
}

/**
 * W3: how fast executions can be started (durably recorded and enqueued). No runner consumes
 * them, so the figure is the start path alone (Tenor: input validation, row insert, job add).
 */
export const w3StartRate: Workload = {
  id: "W3",
  title: "start rate",
  async run(ctx) {
    const count = ctx.quick ? 2_000 : 10_000;
    const url = await ctx.env.freshDatabase("w3");
    const pool = ctx.env.pool(url);
    const systems: Record<string, SystemResult> = {};
    try {
      systems.floor = await measure(ctx, "floor", async () => {
        const floor = new FloorSystem(pool, ctx.env.redis, ctx.env.prefix("w3-floor"));
        await floor.prepare();
        return startRate(count, () => floor.start());
      });
      systems.bullmq = await measure(ctx, "bullmq", async () => {
        const bullmq = new BullmqChainSystem(pool, ctx.env.redisUrl, ctx.env.prefix("w3-bullmq"));
        try {
          await bullmq.prepare();
          return await startRate(count, () => bullmq.start());
        } finally {
          await bullmq.stop();
        }
      });
      systems.dbos = notMeasured(
        "DBOS starts a workflow by running it in the calling process (or enqueuing it for this process's queue runner); a start-only rate is not comparable",
      );
      systems.tenor = await measure(ctx, "tenor", async () => {
        const tenor = await TenorSystem.start({
          databaseUrl: url,
          redisUrl: ctx.env.redisUrl,
          prefix: ctx.env.prefix("w3-tenor"),
          runner: false,
        });
        try {
          return await startRate(count, async () => {
            await tenor.client.start({ workflow: "bench.noop-chain", input: { steps: 10 } });
          });
        } finally {
          await tenor.stop();
        }
      });
    } finally {
      await pool.end();
    }
    return {
      id: "W3",
      title: "start rate",
      status: "ok",
      params: {
        starts: count,
        concurrency: CONCURRENCY,
        runner: "none (start path only)",
        floor: "row insert, then one Lua call; the starts of one tick share one INSERT and one pipeline",
        tenor: "ExecutionClient.start: the starts of one tick share one INSERT and one addBulk",
      },
      systems,
    };
  },
};
