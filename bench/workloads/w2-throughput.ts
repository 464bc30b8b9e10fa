import { forEachLimit, pollUntil } from "../lib/concurrency.js";
import { summarize } from "../lib/stats.js";
import { BullmqChainSystem } from "../systems/bullmq-chain.js";
import { FloorSystem } from "../systems/floor.js";
import { TenorSystem } from "../systems/tenor.js";
import { measure, type SystemResult, type Workload, withDbos } from "./types.js";

const STEPS = 10;
/** The issue fixes the floor's concurrency at 200 chains. */
const FLOOR_CONCURRENCY = 200;
/** Start calls in flight while Tenor's workflows are being started. */
const START_CONCURRENCY = 100;

function workflows(quick: boolean): number {
  return quick ? 1_000 : 2_000;
}

/** Steps per second over `wallMs` and latency percentiles of `count` 10-step workflows (W2, W2C). */
export function throughput(count: number, durations: number[], wallMs: number): SystemResult {
  const latency = summarize(durations);
  return {
    status: "ok",
    figures: {
      stepsPerSec: (count * STEPS) / (wallMs / 1000),
      latencyMsP50: latency.p50,
      latencyMsP99: latency.p99,
    },
    details: { wallMs, workflows: count },
  };
}

export const w2Throughput: Workload = {
  id: "W2",
  title: "throughput",
  async run(ctx) {
    const count = workflows(ctx.quick);
    const url = await ctx.env.freshDatabase("w2");
    const pool = ctx.env.pool(url);
    const systems: Record<string, SystemResult> = {};
    try {
      systems.floor = await measure(ctx, "floor", async () => {
        const floor = new FloorSystem(pool, ctx.env.redis, ctx.env.prefix("w2-floor"));
        await floor.prepare();
        await floor.chains(200, STEPS, FLOOR_CONCURRENCY); // warm-up: connections, statements
        const { durations, wallMs } = await floor.chains(count, STEPS, FLOOR_CONCURRENCY);
        return throughput(count, durations, wallMs);
      });
      systems.bullmq = await measure(ctx, "bullmq", async () => {
        const bullmq = new BullmqChainSystem(pool, ctx.env.redisUrl, ctx.env.prefix("w2-bullmq"));
        try {
          await bullmq.prepare();
          await bullmq.concurrentChains(100, STEPS);
          const { durations, wallMs } = await bullmq.concurrentChains(count, STEPS);
          return throughput(count, durations, wallMs);
        } finally {
          await bullmq.stop();
        }
      });
      systems.dbos = await withDbos(ctx, async (dbos) => {
        await dbos.concurrentChains(100, STEPS);
        const { durations, wallMs } = await dbos.concurrentChains(count, STEPS);
        return throughput(count, durations, wallMs);
      });
      systems.tenor = await measure(ctx, "tenor", async () => {
        const tenor = await TenorSystem.start({
          databaseUrl: url,
          redisUrl: ctx.env.redisUrl,
          prefix: ctx.env.prefix("w2-tenor"),
        });
        try {
          await runBatch(tenor, 100); // warm-up
          const startedAt = Date.now();
          const ids = await runBatch(tenor, count);
          const { rows } = await pool.query<{ latency: number; completed: string }>(
            `SELECT extract(epoch FROM completed_at - created_at) * 1000 AS latency,
                    extract(epoch FROM completed_at) * 1000 AS completed
             FROM executions WHERE id = ANY($1::uuid[])`,
            [ids],
          );
          const end = Math.max(...rows.map((r) => Number(r.completed)));
          return throughput(
            count,
            rows.map((r) => Number(r.latency)),
            end - startedAt,
          );
        } finally {
          await tenor.stop();
        }
      });
    } finally {
      await pool.end();
    }
    return {
      id: "W2",
      title: "throughput",
      status: "ok",
      params: {
        workflows: count,
        stepsPerWorkflow: STEPS,
        floor: `${count} chains, ${FLOOR_CONCURRENCY} in flight; latency = a chain's own run time`,
        bullmq: `${count} chains added at once; worker concurrency 100`,
        dbos: `${count} workflows started at once in-process; pool 20`,
        tenor: `${count} workflows started at once (${START_CONCURRENCY} start calls in flight); runnerConcurrency 100 (default); latency = created_at to completed_at`,
      },
      systems,
    };
  },
};

/** Starts `count` 10-step workflows and waits until all are completed; returns their ids (W2, W10). */
export async function runBatch(tenor: TenorSystem, count: number): Promise<string[]> {
  const ids: string[] = [];
  await forEachLimit(count, START_CONCURRENCY, async () => {
    const { executionId } = await tenor.client.start({
      workflow: "bench.noop-chain",
      input: { steps: STEPS },
    });
    ids.push(executionId);
  });
  await pollUntil(
    `${count} workflows to complete`,
    async () => {
      const { rows } = await tenor.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM executions WHERE id = ANY($1::uuid[]) AND status IN ('completed', 'failed')",
        [ids],
      );
      return (rows[0]?.n ?? 0) >= count ? true : null;
    },
    { everyMs: 50, timeoutMs: 180_000 },
  );
  return ids;
}
