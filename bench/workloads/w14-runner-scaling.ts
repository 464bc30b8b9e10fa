import { RunnerProcess } from "../lib/runner-process.js";
import { TenorSystem } from "../systems/tenor.js";
import { measure, notMeasured, type SystemResult, type Workload } from "./types.js";
import { runBatch } from "./w2-throughput.js";

const STEPS = 10;
const RUNNER_COUNTS = [1, 2, 4] as const;
const WARMUP_WORKFLOWS = 100;

function workflows(quick: boolean): number {
  return quick ? 1_000 : 2_000;
}

/**
 * W14: W2's batch (10-step workflows started at once) on 1, 2 and 4 spawned runner processes
 * against one PostgreSQL and one Redis: steps per second by runner count. On a 2-core machine the
 * curve shows where one machine's CPU ends, not how far the design scales (docs/performance.md).
 */
export const w14RunnerScaling: Workload = {
  id: "W14",
  title: "runner scaling",
  async run(ctx) {
    const count = workflows(ctx.quick);
    const tenor = await measure(ctx, "tenor", async (): Promise<SystemResult> => {
      const bySize: Record<string, number> = {};
      const wall: Record<string, number> = {};
      for (const runners of RUNNER_COUNTS) {
        ctx.log(`    ${runners} runner process(es) ...`);
        const { stepsPerSec, wallMs } = await batchOn(ctx, runners, count);
        bySize[String(runners)] = stepsPerSec;
        wall[String(runners)] = wallMs;
      }
      return {
        status: "ok",
        figures: {
          stepsPerSecByRunners: bySize,
          scaling4over1: (bySize["4"] ?? Number.NaN) / (bySize["1"] ?? Number.NaN),
        },
        details: { wallMs: wall },
      };
    });
    return {
      id: "W14",
      title: "runner scaling",
      status: "ok",
      params: {
        workflows: count,
        stepsPerWorkflow: STEPS,
        runnerCounts: [...RUNNER_COUNTS],
        runners: "spawned bench/tenor-runner.ts processes, runnerConcurrency 100 each (default)",
        starts: "100 start calls in flight from the bench process (as W2)",
      },
      systems: {
        floor: notMeasured("one process by definition"),
        bullmq: notMeasured("not run across processes here"),
        dbos: notMeasured("not run across processes here"),
        tenor,
      },
    };
  },
};

async function batchOn(
  ctx: Parameters<Workload["run"]>[0],
  runners: number,
  count: number,
): Promise<{ stepsPerSec: number; wallMs: number }> {
  const url = await ctx.env.freshDatabase(`w10-${runners}`);
  const prefix = ctx.env.prefix(`w10-${runners}`);
  const client = await TenorSystem.start({
    databaseUrl: url,
    redisUrl: ctx.env.redisUrl,
    prefix,
    runner: false,
  });
  const processes: RunnerProcess[] = [];
  try {
    for (let i = 0; i < runners; i++)
      processes.push(
        await RunnerProcess.spawn({ databaseUrl: url, redisUrl: ctx.env.redisUrl, prefix, durable: {} }),
      );
    await runBatch(client, WARMUP_WORKFLOWS);
    const startedAt = Date.now();
    const ids = await runBatch(client, count);
    const { rows } = await client.pool.query<{ end: number }>(
      "SELECT max(extract(epoch FROM completed_at) * 1000)::float8 AS end FROM executions WHERE id = ANY($1::uuid[])",
      [ids],
    );
    const wallMs = Number(rows[0]?.end) - startedAt;
    return { stepsPerSec: (count * STEPS) / (wallMs / 1000), wallMs };
  } finally {
    await Promise.all(processes.map((p) => p.stop()));
    await client.stop();
  }
}
