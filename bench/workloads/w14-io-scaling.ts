import { loadConfig } from "../../src/config/load-config.js";
import { windowedLoop } from "../lib/closed-loop.js";
import { ResourceSampler, type ResourceUsage } from "../lib/resource-sampler.js";
import { summarize } from "../lib/stats.js";
import { DEPLOYED_WORKFLOW, TenorDeployed } from "../systems/tenor-deployed.js";
import { measure, notMeasured, type SystemResult, type Workload, type WorkloadContext } from "./types.js";

const STEPS = 10;
/** Each step's body waits this long, in ms: a network call, so a turn holds its slot while idle. */
const STEP_MS = 20;
const RUNNER_COUNTS = [1, 2, 4] as const;

/**
 * W14IO: runner scaling when steps wait on I/O instead of using CPU. `demo.steps` workflows of 10
 * steps of 20 ms on 1, 2 and 4 compiled runner processes, each with the product's default
 * concurrency, driven by enough closed-loop clients to keep 4 runners' slots full twice over.
 * One runner can do at most concurrency × 1000 / 20 steps per second; where the curve falls short
 * of that ceiling, the samples of PostgreSQL, Redis and CPU in the details say what bounded it.
 */
export const w14IoScaling: Workload = {
  id: "W14IO",
  title: "runner scaling, I/O-bound steps",
  async run(ctx) {
    const { runnerConcurrency } = loadConfig({
      env: { DATABASE_URL: ctx.env.serverUrl, REDIS_URL: ctx.env.redisUrl },
    }).durable;
    const clients = Math.max(...RUNNER_COUNTS) * runnerConcurrency * 2;
    const timing = ctx.quick ? { warmupMs: 2_000, windowMs: 5_000 } : { warmupMs: 3_000, windowMs: 15_000 };
    const tenor = await measure(ctx, "tenor", async (): Promise<SystemResult> => {
      const bySize: Record<string, number> = {};
      const details: Record<string, unknown> = {};
      for (const runners of RUNNER_COUNTS) {
        ctx.log(`    ${runners} runner process(es) ...`);
        const run = await windowOn(ctx, runners, clients, timing);
        bySize[String(runners)] = run.stepsPerSec;
        details[String(runners)] = run;
      }
      return {
        status: "ok",
        figures: {
          stepsPerSecByRunners: bySize,
          scaling4over1: (bySize["4"] ?? Number.NaN) / (bySize["1"] ?? Number.NaN),
        },
        details: { byRunners: details },
      };
    });
    return {
      id: "W14IO",
      title: "runner scaling, I/O-bound steps",
      status: "ok",
      params: {
        workflow: `${DEPLOYED_WORKFLOW} { steps: ${STEPS}, stepMs: ${STEP_MS} }`,
        runnerCounts: [...RUNNER_COUNTS],
        runnerConcurrency: `${runnerConcurrency} per runner (durable.runnerConcurrency, the product default)`,
        clients: `${clients} closed-loop clients through createExecutionClient in the bench process (4 runners × concurrency × 2)`,
        window: `${timing.warmupMs} ms warm-up, then workflows finishing within ${timing.windowMs} ms count`,
        ceiling: `per runner ${runnerConcurrency} slots × ${1000 / STEP_MS} steps/s each = ${(runnerConcurrency * 1000) / STEP_MS} steps/s`,
        runners:
          "node dist/workers/main.js with DAPI_ROLE=runner on product defaults (no configuration file; DATABASE_URL, REDIS_URL, TENOR_REDIS_PREFIX, the health port, TENOR_LOG_LEVEL=info)",
        samples:
          "over the window: PostgreSQL commits/s (pg_stat_database) and active backends (pg_stat_activity, every 250 ms) of the workload's database; Redis commands/s, CPU and top commands (INFO, the whole shared instance); CPU of the machine (/proc/stat), the bench process and each runner (tenor_process_cpu_seconds_total)",
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

async function windowOn(
  ctx: WorkloadContext,
  runners: number,
  clients: number,
  timing: { warmupMs: number; windowMs: number },
): Promise<{
  stepsPerSec: number;
  completed: number;
  ceilingStepsPerSec: number;
  latency: ReturnType<typeof summarize>;
  resources: ResourceUsage;
}> {
  const url = await ctx.env.freshDatabase(`w14io-${runners}`);
  const tenor = await TenorDeployed.start({
    databaseUrl: url,
    redisUrl: ctx.env.redisUrl,
    prefix: ctx.env.prefix(`w14io-${runners}`),
    runners,
  });
  const samplerPool = ctx.env.pool(url, 1, "tenor-bench-sampler");
  try {
    const result = await windowedLoop({
      clients,
      ...timing,
      call: async () => ({ ms: await tenor.chain(STEPS, STEP_MS) }),
      onWindow: async () => {
        const sampler = await ResourceSampler.start(samplerPool, ctx.env.redis, tenor.runners);
        return () => sampler.stop();
      },
    });
    const completed = result.durations.length;
    const stepsPerSec = (completed * STEPS) / (timing.windowMs / 1000);
    ctx.log(`      ${Math.round(stepsPerSec)} steps/s`);
    return {
      stepsPerSec,
      completed,
      ceilingStepsPerSec: (runners * tenor.defaults.durable.runnerConcurrency * 1000) / STEP_MS,
      latency: summarize(result.durations),
      resources: result.during,
    };
  } finally {
    await samplerPool.end().catch(() => undefined);
    await tenor.stop();
  }
}
