/**
 * Probe behind the floor's choice (docs/performance.md, "Method"): the grouped floor with each
 * flush moment (the next turn of the event loop as Tenor's batchers, the end of the current
 * synchronous run, at once while a write slot is free or while none runs, a 1 ms timer) and with
 * its Lua calls pipelined per group or sent one per step, next to one commit per step
 * (floor-serial), and the floor's default with twice Tenor's statements in flight. Each variant
 * runs W1's serial 10-step chain (between a Tenor and a BullMQ chain in the same process, as in
 * W1), W2's batch and W2C's closed loop; the variants take turns round by round so load from
 * other users of the machine hits them alike. The fastest becomes
 * bench/systems/floor.ts's default.
 *
 * Usage: node --import tsx bench/probes/floor-variants.ts
 * Env: BENCH_DATABASE_URL, BENCH_REDIS_URL (as `npm run bench`); ROUNDS (default 3), WORKFLOWS
 * (W2 and W2C's count, default 1000), IN_FLIGHT (W2's chains in flight, default all of them, as
 * in W2), VARIANTS (names to run, comma-separated; default all).
 */
import { BenchEnv } from "../lib/bench-env.js";
import { type Chain, withLimit } from "../lib/chains.js";
import { median } from "../lib/stats.js";
import type { FlushOn } from "../lib/tick-group.js";
import { BullmqChainSystem } from "../systems/bullmq-chain.js";
import { type FloorProgram, type FloorRedisCalls, FloorSystem } from "../systems/floor.js";
import { FloorSerialSystem } from "../systems/floor-serial.js";
import { TenorSystem } from "../systems/tenor.js";

const STEPS = 10;
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const WORKFLOWS = Number(process.env.WORKFLOWS ?? 1_000);
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? WORKFLOWS);
const CLIENTS = 100;
const SERIAL_RUNS = 30;

const FLUSHES: Record<string, FlushOn> = {
  immediate: "immediate",
  microtask: "microtask",
  "at-once": "at-once",
  "at-once-when-idle": "at-once-when-idle",
  "1ms": { afterMs: 1 },
};
const REDIS_CALLS: readonly FloorRedisCalls[] = ["pipelined", "per-step", "pipelined-when-busy"];

const env = BenchEnv.fromEnv(process.env);
try {
  await env.prepareTemplate();
  const url = await env.freshDatabase("floor_variants");
  const pool = env.pool(url);
  // W1 runs the floors between other systems' chains in one process; so does the serial shape here.
  const tenor = await TenorSystem.start({
    databaseUrl: url,
    redisUrl: env.redisUrl,
    prefix: env.prefix("tenor"),
  });
  const bullmq = new BullmqChainSystem(pool, env.redisUrl, env.prefix("bullmq"));
  await bullmq.prepare();
  const variants: Array<[string, FloorProgram]> = [
    ["floor-serial", new FloorSerialSystem(pool, env.redis, env.prefix("serial"))],
  ];
  for (const [flushName, flushOn] of Object.entries(FLUSHES))
    for (const redisCalls of REDIS_CALLS)
      variants.push([
        `${flushName}/${redisCalls}`,
        new FloorSystem(pool, env.redis, env.prefix(`${flushName}-${redisCalls}`), { flushOn, redisCalls }),
      ]);
  // Tenor's in-flight limit is not the floor's to change; twice as many shows what it costs.
  variants.push([
    "default/8-in-flight",
    new FloorSystem(pool, env.redis, env.prefix("in-flight-8"), { maxInFlight: 8 }),
  ]);
  const only = process.env.VARIANTS?.split(",");
  if (only) variants.splice(0, variants.length, ...variants.filter(([name]) => only.includes(name)));
  await variants[0]?.[1].prepare();
  const figures = new Map<string, { w1: number[]; w2: number[]; w2c: number[] }>(
    variants.map(([name]) => [name, { w1: [], w2: [], w2c: [] }]),
  );
  for (let round = -1; round < ROUNDS; round++) {
    for (const [name, floor] of variants) {
      const chain: Chain = (steps) => floor.chain(steps);
      const serial: number[] = [];
      for (let i = 0; i < SERIAL_RUNS; i++) {
        await tenor.chain(STEPS);
        await bullmq.chain(STEPS);
        serial.push((await chain(STEPS)) / STEPS);
      }
      const batch = await withLimit(WORKFLOWS, IN_FLIGHT, STEPS, chain);
      const loop = await withLimit(WORKFLOWS, CLIENTS, STEPS, chain);
      if (round < 0) continue; // warm-up: connections, statements, scripts
      const f = figures.get(name);
      f?.w1.push(median(serial));
      f?.w2.push((WORKFLOWS * STEPS) / (batch.wallMs / 1000));
      f?.w2c.push((WORKFLOWS * STEPS) / (loop.wallMs / 1000));
      process.stderr.write(`round ${round} ${name} done\n`);
    }
  }
  const table = [...figures].map(([variant, f]) => ({
    variant,
    w1MsPerStepP50: Number(median(f.w1).toFixed(3)),
    w2StepsPerSec: Math.round(median(f.w2)),
    w2cStepsPerSec: Math.round(median(f.w2c)),
  }));
  console.log(JSON.stringify({ rounds: ROUNDS, workflows: WORKFLOWS, inFlight: IN_FLIGHT, table }, null, 2));
  await Promise.allSettled([tenor.stop(), bullmq.stop()]);
  await pool.end();
} finally {
  await env.cleanup();
}
