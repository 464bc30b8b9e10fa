import { randomUUID } from "node:crypto";
import type pg from "pg";
import { TurnRunner } from "../../src/engine/turn-runner.js";
import { PgExecutionStore } from "../../src/store/pg-execution-store.js";
import { nowMs } from "../lib/concurrency.js";
import { median } from "../lib/stats.js";
import { TenorSystem } from "../systems/tenor.js";
import { measure, notMeasured, type SystemResult, type Workload } from "./types.js";

const SIZES = [10, 100, 1_000, 10_000];

/** Writes `steps` journaled no-op steps and a pending signal wait after them, as the engine would. */
async function seedJournal(pool: pg.Pool, executionId: string, steps: number): Promise<void> {
  await pool.query(
    `INSERT INTO journal_entries (execution_id, position, kind, name, state, result, attempts, turn, completed_at)
     SELECT $1::uuid, g, 'step'::"JournalKind", 's' || g, 'ok'::"JournalState", to_jsonb(g), 1, 1, now()
     FROM generate_series(0, $2::int - 1) g
     UNION ALL
     SELECT $1::uuid, $2::int, 'signal'::"JournalKind", 'go', 'pending'::"JournalState", '{"deadline":null}'::jsonb, 1, 1, NULL`,
    [executionId, steps],
  );
}

/**
 * W6: the cost of one turn of an execution whose journal holds N steps: load the journal (one
 * statement), replay the body through N recorded positions, find no signal, park again. Timed
 * directly on the engine's TurnRunner, so no queue latency is included.
 */
export const w6Replay: Workload = {
  id: "W6",
  title: "replay cost",
  async run(ctx) {
    const runs = ctx.quick ? 3 : 7;
    const url = await ctx.env.freshDatabase("w6");
    const pool = ctx.env.pool(url, 4);
    const ids = new Map<number, string>();
    const systems: Record<string, SystemResult> = {};
    try {
      const tenor = await TenorSystem.start({
        databaseUrl: url,
        redisUrl: ctx.env.redisUrl,
        prefix: ctx.env.prefix("w6-tenor"),
        runner: false,
      });
      const store = new PgExecutionStore(tenor.pool);
      try {
        for (const size of SIZES) {
          const id = randomUUID();
          await store.createExecution({
            id,
            workflow: "bench.park",
            workflowVersion: 1,
            orgId: "default",
            input: { steps: size },
            key: null,
            idempotencyKey: null,
            requestHash: null,
            parentId: null,
            parentPosition: null,
          });
          await seedJournal(pool, id, size);
          ids.set(size, id);
        }
        systems.floor = await measure(ctx, "floor", async () => {
          const replayMs: Record<string, number> = {};
          for (const size of SIZES) {
            const samples: number[] = [];
            for (let i = 0; i <= runs; i++) {
              const t = nowMs();
              await tenor.pool.query(
                "SELECT position, kind, name, state, result FROM journal_entries WHERE execution_id = $1 ORDER BY position",
                [ids.get(size)],
              );
              if (i > 0) samples.push(nowMs() - t);
            }
            replayMs[String(size)] = median(samples);
          }
          return { status: "ok", figures: { replayMs } };
        });
        systems.tenor = await measure(ctx, "tenor", async () => {
          const turns = new TurnRunner({
            store,
            registry: tenor.registry,
            dispatcher: {
              dispatchChild: async () => undefined,
              dispatchActivity: async () => ({ state: "dispatched" as const }),
            },
            recovery: tenor.config.durable.recovery,
            logger: tenor.logger,
          });
          const replayMs: Record<string, number> = {};
          for (const size of SIZES) {
            const samples: number[] = [];
            for (let i = 0; i <= runs; i++) {
              const t = nowMs();
              const outcome = await turns.run(ids.get(size) as string);
              if (outcome.kind !== "parked") throw new Error(`replay of ${size} steps ended ${outcome.kind}`);
              if (i > 0) samples.push(nowMs() - t);
            }
            replayMs[String(size)] = median(samples);
          }
          return { status: "ok", figures: { replayMs } };
        });
      } finally {
        await tenor.stop();
      }
    } finally {
      await pool.end();
    }
    systems.bullmq = notMeasured("plain BullMQ has no journal to replay");
    systems.dbos = notMeasured("DBOS replays only when recovering a workflow at launch; not timed per turn");
    return {
      id: "W6",
      title: "replay cost",
      status: "ok",
      params: {
        journalSizes: SIZES,
        runs,
        figure: "median of one full turn (load, replay, park) after one untimed warm-up turn",
        floor: "one SELECT of the N journal rows on a bare pg pool",
      },
      systems,
    };
  },
};
