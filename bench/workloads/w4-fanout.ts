import { median } from "../lib/stats.js";
import { BullmqChainSystem } from "../systems/bullmq-chain.js";
import { FloorSystem, floorFanout } from "../systems/floor.js";
import { TenorSystem } from "../systems/tenor.js";
import { measure, type SystemResult, type Workload, withDbos } from "./types.js";

const CHILDREN = 100;

async function fanoutRate(runs: number, fanout: () => Promise<number>): Promise<SystemResult> {
  await fanout(); // warm-up
  const durations: number[] = [];
  for (let i = 0; i < runs; i++) durations.push(await fanout());
  const ms = median(durations);
  return {
    status: "ok",
    figures: { childrenPerSec: CHILDREN / (ms / 1000) },
    details: { medianMs: ms, durationsMs: durations },
  };
}

/** W4: a parent starts 100 children at once and completes when all have; children/s of the whole. */
export const w4Fanout: Workload = {
  id: "W4",
  title: "fan-out/fan-in",
  async run(ctx) {
    const runs = ctx.quick ? 3 : 7;
    const url = await ctx.env.freshDatabase("w4");
    const pool = ctx.env.pool(url);
    const systems: Record<string, SystemResult> = {};
    try {
      systems.floor = await measure(ctx, "floor", async () => {
        const floor = new FloorSystem(pool, ctx.env.redis, ctx.env.prefix("w4-floor"));
        await floor.prepare();
        return fanoutRate(runs, () => floorFanout(floor, CHILDREN));
      });
      systems.bullmq = await measure(ctx, "bullmq", async () => {
        const bullmq = new BullmqChainSystem(pool, ctx.env.redisUrl, ctx.env.prefix("w4-bullmq"));
        try {
          await bullmq.prepare();
          return await fanoutRate(runs, () => bullmq.fanout(CHILDREN));
        } finally {
          await bullmq.stop();
        }
      });
      systems.dbos = await withDbos(ctx, (dbos) => fanoutRate(runs, () => dbos.fanout(CHILDREN)));
      systems.tenor = await measure(ctx, "tenor", async () => {
        const tenor = await TenorSystem.start({
          databaseUrl: url,
          redisUrl: ctx.env.redisUrl,
          prefix: ctx.env.prefix("w4-tenor"),
        });
        try {
          // Children 0 … 99 each return their index.
          const sum = (CHILDREN * (CHILDREN - 1)) / 2;
          return await fanoutRate(runs, async () => {
            const started = performance.now();
            const { completedAt } = await tenor.run("bench.fanout-parent", { children: CHILDREN }, { sum });
            return completedAt - started;
          });
        } finally {
          await tenor.stop();
        }
      });
    } finally {
      await pool.end();
    }
    return {
      id: "W4",
      title: "fan-out/fan-in",
      status: "ok",
      params: {
        children: CHILDREN,
        runs,
        figure: "children / median(parent start to parent completion; Tenor: to the client's checked output)",
        floor:
          "100 × (row insert + Lua call, then one step) at once, grouped per tick as in W2, then one parent step",
        bullmq: "FlowProducer parent with 100 child jobs, each committing a checkpoint",
        dbos: "parent workflow starting 100 child workflows, then awaiting each result",
        tenor: "parent with Promise.all of 100 ctx.child calls (BullMQ flow link + wake)",
      },
      systems,
    };
  },
};
