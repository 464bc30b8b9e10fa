import { randomUUID } from "node:crypto";
import { prismaFor } from "../../src/store/prisma.js";
import { forEachLimit, nowMs } from "../lib/concurrency.js";
import { summarize } from "../lib/stats.js";
import { FLOOR_TABLE_SQL } from "../systems/floor.js";
import { measure, type SystemResult, type Workload } from "./types.js";

/**
 * Prisma on the hot path: the checkpoint insert of the floor (one committed row) sent by the bare
 * pg pool ("floor") and by Prisma Client's `$executeRawUnsafe` over the same pool ("tenor" column:
 * the way Tenor would send it through Prisma). The difference per statement, next to W2's time per
 * step in the same run, is the share of W2 that moving the hot path to Prisma would cost
 * (docs/performance.md, "Prisma on the hot path").
 */
const INSERT = "INSERT INTO bench_checkpoints (chain_id, position, result) VALUES ($1::uuid, $2, $3::jsonb)";
const CONCURRENCY = 16;

function statements(quick: boolean): number {
  return quick ? 2_000 : 10_000;
}

async function run(
  count: number,
  send: (chainId: string, position: number) => Promise<unknown>,
): Promise<SystemResult> {
  const serial: number[] = [];
  const chainId = randomUUID();
  for (let i = 0; i < Math.min(count, 1_000); i++) {
    const started = nowMs();
    await send(chainId, i);
    serial.push(nowMs() - started);
  }
  const concurrentChain = randomUUID();
  const started = nowMs();
  await forEachLimit(count, CONCURRENCY, (i) => send(concurrentChain, i).then(() => undefined));
  const wallMs = nowMs() - started;
  const latency = summarize(serial);
  return {
    status: "ok",
    figures: {
      serialMsP50: latency.p50,
      serialMsP99: latency.p99,
      statementsPerSec: count / (wallMs / 1000),
    },
    details: { serialStatements: serial.length, concurrentStatements: count, concurrency: CONCURRENCY },
  };
}

export const p1PrismaHotPath: Workload = {
  id: "P1",
  title: "Prisma on the hot path (one checkpoint insert: pg vs Prisma raw over the same pool)",
  async run(ctx) {
    const count = statements(ctx.quick);
    const url = await ctx.env.freshDatabase("p1");
    const pool = ctx.env.pool(url, CONCURRENCY);
    const prisma = prismaFor(pool);
    const systems: Record<string, SystemResult> = {};
    try {
      await pool.query(FLOOR_TABLE_SQL);
      const viaPg = (chainId: string, position: number) =>
        pool.query(INSERT, [chainId, position, '{"ok":true}']);
      const viaPrisma = (chainId: string, position: number) =>
        prisma.$executeRawUnsafe(INSERT, chainId, position, '{"ok":true}');
      // Warm-up: connections, prepared plans, Prisma's first-query setup.
      await run(200, viaPg);
      await run(200, viaPrisma);
      systems.floor = await measure(ctx, "pg", () => run(count, viaPg));
      systems.tenor = await measure(ctx, "prisma", () => run(count, viaPrisma));
    } finally {
      await prisma.$disconnect();
      await pool.end();
    }
    return {
      id: "P1",
      title: this.title,
      status: "ok",
      params: { statements: count, concurrency: CONCURRENCY },
      systems,
    };
  },
};
