import { allAtOnce, type Chain } from "../lib/chains.js";
import { forEachLimit, pollUntil } from "../lib/concurrency.js";
import { summarize } from "../lib/stats.js";
import { BullmqChainSystem } from "../systems/bullmq-chain.js";
import { FloorSystem } from "../systems/floor.js";
import type { TenorSystem } from "../systems/tenor.js";
import { measureTenorForms } from "../systems/tenor-forms.js";
import { measure, type SystemResult, type Workload, withDbos } from "./types.js";

const STEPS = 10;
/** Start calls in flight while {@link runBatch} starts its workflows. */
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
        const chain: Chain = (steps) => floor.chain(steps);
        // All at once, as the others: measured with bench/probes/floor-variants.ts (IN_FLIGHT), the
        // grouped floor moves at least as many steps as with 200 chains in flight.
        await allAtOnce(200, STEPS, chain); // warm-up: connections, statements
        const { durations, wallMs } = await allAtOnce(count, STEPS, chain);
        return throughput(count, durations, wallMs);
      });
      systems.bullmq = await measure(ctx, "bullmq", async () => {
        const bullmq = new BullmqChainSystem(pool, ctx.env.redisUrl, ctx.env.prefix("w2-bullmq"));
        try {
          await bullmq.prepare();
          const chain: Chain = (steps) => bullmq.chain(steps);
          await allAtOnce(100, STEPS, chain);
          const { durations, wallMs } = await allAtOnce(count, STEPS, chain);
          return throughput(count, durations, wallMs);
        } finally {
          await bullmq.stop();
        }
      });
      systems.dbos = await withDbos(ctx, async (dbos) => {
        const chain: Chain = (steps) => dbos.chain(steps);
        await allAtOnce(100, STEPS, chain);
        const { durations, wallMs } = await allAtOnce(count, STEPS, chain);
        return throughput(count, durations, wallMs);
      });
      Object.assign(
        systems,
        await measureTenorForms(ctx, { databaseUrl: url, label: "w2" }, async (chain) => {
          await allAtOnce(100, STEPS, chain); // warm-up
          const { durations, wallMs } = await allAtOnce(count, STEPS, chain);
          return throughput(count, durations, wallMs);
        }),
      );
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
        sample:
          "one workflow: its client's start call until the client holds the checked result (read back from PostgreSQL); steps/s over the first start to the last result",
        floor: `${count} chains started at once; the writes, reads and Lua calls ready together share one statement or pipeline`,
        bullmq: `${count} chains added at once; worker concurrency 100`,
        dbos: `${count} workflows started at once in-process; pool 20`,
        tenor: `${count} workflows started at once by a library client against one compiled runner process on product defaults (runnerConcurrency 100, log level info, metrics and runner services on)`,
        "tenor-in-process": `${count} workflows started at once; the runner engine in the bench process`,
      },
      systems,
    };
  },
};

/**
 * Starts `count` 10-step workflows and waits until all are terminal, for workloads that time a
 * batch from the rows (W14); returns their ids.
 * @throws Error when any of them failed or completed with another output than `{ done: 10 }`.
 */
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
  const { rows } = await tenor.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM executions
     WHERE id = ANY($1::uuid[]) AND NOT (status = 'completed' AND output = $2::jsonb)`,
    [ids, JSON.stringify({ done: STEPS })],
  );
  const wrong = rows[0]?.n ?? 0;
  if (wrong > 0) throw new Error(`${wrong} of ${count} workflows failed or completed with a wrong output`);
  return ids;
}
