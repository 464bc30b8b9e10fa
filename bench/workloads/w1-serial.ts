import type { Chain } from "../lib/chains.js";
import { sleep } from "../lib/concurrency.js";
import { summarize } from "../lib/stats.js";
import { BullmqChainSystem } from "../systems/bullmq-chain.js";
import type { DbosSystem } from "../systems/dbos.js";
import { FloorSystem } from "../systems/floor.js";
import { FloorSerialSystem } from "../systems/floor-serial.js";
import { TenorSystem } from "../systems/tenor.js";
import { TenorDeployed } from "../systems/tenor-deployed.js";
import type { SystemName, SystemResult, Workload } from "./types.js";

/** Chain lengths and how many chains of each are timed per system (after untimed warm-ups). */
function plan(quick: boolean): Array<{ steps: number; runs: number }> {
  return quick
    ? [
        { steps: 10, runs: 20 },
        { steps: 100, runs: 3 },
      ]
    : [
        { steps: 10, runs: 60 },
        { steps: 100, runs: 12 },
      ];
}
const WARMUP_RUNS = 3;
/**
 * Pause before every chain, in ms. An engine keeps working after its client has the result
 * (Tenor's runner finishes the job and fetches the next one), and the chain started next in the
 * same process shared that work, always the same system, since interleaving keeps each system's
 * predecessor: two identical floors, one right after DBOS's and Tenor's chains, differed by
 * 20–35 % without the pause and by 3–8 % with it.
 */
const SETTLE_MS = 5;

/**
 * Runs every system's chains interleaved (floor, floor-serial, bullmq, tenor, dbos, floor, ...),
 * so a burst of load from other users of the machine hits every system alike, each chain after a
 * pause of SETTLE_MS. Each timed chain gives one sample of ms/step; the headline p50/p99 pool
 * both chain lengths.
 */
async function interleaved(
  quick: boolean,
  chains: Partial<Record<SystemName, Chain>>,
): Promise<Partial<Record<SystemName, SystemResult>>> {
  const entries = Object.entries(chains) as Array<[SystemName, Chain]>;
  const samples = new Map<SystemName, Map<number, number[]>>(entries.map(([name]) => [name, new Map()]));
  const failed = new Map<SystemName, string>();
  for (const { steps, runs } of plan(quick)) {
    for (let run = -WARMUP_RUNS; run < runs; run++) {
      for (const [name, chain] of entries) {
        if (failed.has(name)) continue;
        await sleep(SETTLE_MS);
        try {
          const ms = await chain(steps);
          if (run < 0) continue;
          const bySteps = samples.get(name) as Map<number, number[]>;
          bySteps.set(steps, [...(bySteps.get(steps) ?? []), ms / steps]);
        } catch (error) {
          failed.set(name, (error as Error).message);
        }
      }
    }
  }
  const results: Partial<Record<SystemName, SystemResult>> = {};
  for (const [name] of entries) {
    const reason = failed.get(name);
    if (reason) {
      results[name] = { status: "error", reason };
      continue;
    }
    const bySteps = samples.get(name) as Map<number, number[]>;
    const all = [...bySteps.values()].flat();
    const s = summarize(all);
    const byLength = Object.fromEntries(
      [...bySteps].map(([steps, list]) => [String(steps), summarize(list)]),
    );
    results[name] = {
      status: "ok",
      figures: {
        msPerStepP50: s.p50,
        msPerStepP99: s.p99,
        msPerStepP50ByLength: Object.fromEntries(Object.entries(byLength).map(([k, v]) => [k, v.p50])),
      },
      details: { byLength },
    };
  }
  return results;
}

export const w1Serial: Workload = {
  id: "W1",
  title: "serial latency",
  async run(ctx) {
    const url = await ctx.env.freshDatabase("w1");
    const pool = ctx.env.pool(url);
    const floor = new FloorSystem(pool, ctx.env.redis, ctx.env.prefix("w1-floor"));
    const floorSerial = new FloorSerialSystem(pool, ctx.env.redis, ctx.env.prefix("w1-floor-serial"));
    const bullmq = new BullmqChainSystem(pool, ctx.env.redisUrl, ctx.env.prefix("w1-bullmq"));
    const dbos = await ctx.dbos();
    const tenor = await TenorSystem.start({
      databaseUrl: url,
      redisUrl: ctx.env.redisUrl,
      prefix: ctx.env.prefix("w1-tenor"),
    });
    const deployed = await TenorDeployed.start({
      databaseUrl: url,
      redisUrl: ctx.env.redisUrl,
      prefix: ctx.env.prefix("w1-deployed"),
    }).catch(async (error: Error) => {
      await tenor.stop();
      throw error;
    });
    try {
      await floor.prepare();
      await bullmq.prepare();
      const chains: Partial<Record<SystemName, Chain>> = {
        floor: (steps) => floor.chain(steps),
        "floor-serial": (steps) => floorSerial.chain(steps),
        bullmq: (steps) => bullmq.chain(steps),
        "tenor-in-process": (steps) => tenor.chain(steps),
        tenor: (steps) => deployed.chain(steps),
      };
      if (!("error" in dbos)) chains.dbos = (steps) => (dbos as DbosSystem).chain(steps);
      ctx.log("  floor, floor-serial, bullmq, dbos, tenor-in-process, tenor interleaved ...");
      const systems = await interleaved(ctx.quick, chains);
      if ("error" in dbos) systems.dbos = { status: "unavailable", reason: dbos.error };
      return {
        id: "W1",
        title: "serial latency",
        status: "ok",
        params: {
          chains: plan(ctx.quick),
          warmupRunsPerLength: WARMUP_RUNS,
          order: `systems interleaved chain by chain, each chain after a ${SETTLE_MS} ms pause`,
          sample:
            "one chain: the client's start call until it holds the checked result (read back from PostgreSQL), divided by its steps",
        },
        systems,
      };
    } finally {
      await Promise.allSettled([bullmq.stop(), tenor.stop(), deployed.stop()]);
      await pool.end();
    }
  },
};
