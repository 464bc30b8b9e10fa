import { type Chain, withLimit } from "../lib/chains.js";
import { BullmqChainSystem } from "../systems/bullmq-chain.js";
import type { DbosSystem } from "../systems/dbos.js";
import { FloorSystem } from "../systems/floor.js";
import { measureTenorForms } from "../systems/tenor-forms.js";
import { measure, type SystemResult, type Workload, withDbos } from "./types.js";
import { throughput } from "./w2-throughput.js";

const STEPS = 10;
/** Clients, each starting its next workflow when its last one finished. */
const CLIENTS = 100;
const WARMUP_WORKFLOWS = 100;

function workflows(quick: boolean): number {
  return quick ? 1_000 : 2_000;
}

/**
 * `count` workflows driven by CLIENTS closed-loop clients: how an API client drives an engine
 * (a new request when the last answer came), as opposed to W2's all-at-once batch. Steps per
 * second over the wall time, and per-workflow latency from the client's start call.
 */
async function closedLoop(count: number, chain: Chain): Promise<SystemResult> {
  await withLimit(WARMUP_WORKFLOWS, CLIENTS, STEPS, chain);
  const { durations, wallMs } = await withLimit(count, CLIENTS, STEPS, chain);
  const result = throughput(count, durations, wallMs);
  return result.status === "ok" ? { ...result, details: { ...result.details, clients: CLIENTS } } : result;
}

export const w2cClosedLoop: Workload = {
  id: "W2C",
  title: "closed-loop throughput",
  async run(ctx) {
    const count = workflows(ctx.quick);
    const url = await ctx.env.freshDatabase("w2c");
    const pool = ctx.env.pool(url);
    const systems: Record<string, SystemResult> = {};
    try {
      systems.floor = await measure(ctx, "floor", async () => {
        const floor = new FloorSystem(pool, ctx.env.redis, ctx.env.prefix("w2c-floor"));
        await floor.prepare();
        return closedLoop(count, (steps) => floor.chain(steps));
      });
      systems.bullmq = await measure(ctx, "bullmq", async () => {
        const bullmq = new BullmqChainSystem(pool, ctx.env.redisUrl, ctx.env.prefix("w2c-bullmq"));
        try {
          await bullmq.prepare();
          return await closedLoop(count, (steps) => bullmq.chain(steps));
        } finally {
          await bullmq.stop();
        }
      });
      systems.dbos = await withDbos(ctx, (dbos: DbosSystem) =>
        closedLoop(count, (steps) => dbos.chain(steps)),
      );
      Object.assign(
        systems,
        await measureTenorForms(ctx, { databaseUrl: url, label: "w2c" }, (chain) => closedLoop(count, chain)),
      );
    } finally {
      await pool.end();
    }
    return {
      id: "W2C",
      title: "closed-loop throughput",
      status: "ok",
      params: {
        workflows: count,
        stepsPerWorkflow: STEPS,
        clients: CLIENTS,
        warmupWorkflows: WARMUP_WORKFLOWS,
        loop: "each client starts its next workflow when it holds its last one's checked result",
        sample:
          "one workflow: its client's start call until the client holds the checked result (read back from PostgreSQL), as W1",
        floor: "writes and Lua calls grouped per tick across the clients' chains",
        tenor:
          "one compiled runner process on product defaults (node dist/workers/main.js, DAPI_ROLE=runner, log level info, metrics and every runner service on); the bench holds a library client: ExecutionClient.start, then waitForTerminal, output checked",
        "tenor-in-process":
          "the runner engine in the bench process (log level error, no metrics or runner services), same client calls",
      },
      systems,
    };
  },
};
