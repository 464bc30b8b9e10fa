import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENGINE_ERRORS } from "../../src/engine/error-codes.js";
import { counts, createFaultWorld, type FaultWorld } from "../runtime/fault-harness.js";
import { killAllProcesses } from "../support/processes.js";
import { chaosRounds, chaosTimeout } from "./chaos-rounds.js";

/**
 * Chaos: a poisoned row in a busy group commit. Many executions run their steps at once on a real
 * runner, so their journal appends share multi-row INSERTs; a few return a string with `\u0000`,
 * which PostgreSQL refuses (22P05). Only those fail, once, with RESULT_NOT_STORABLE naming the
 * step (docs/engine.md, "The journal's hot path"); every other execution completes with each
 * step's work done exactly once, none lost, none suspended.
 */

const rounds = chaosRounds();
const PER_ROUND = 40;
const POISONED_EVERY = 10;
let world: FaultWorld;

beforeAll(async () => {
  world = await createFaultWorld(import.meta.url);
  await world.startRunner("chaos-runner");
});

afterAll(async () => {
  await killAllProcesses();
  await world?.close();
});

describe("chaos: a poisoned row inside a busy batch", () => {
  it(
    `fails only the poisoned executions (${rounds} round(s) of ${PER_ROUND})`,
    async () => {
      for (let round = 0; round < rounds; round++) {
        const started = await Promise.all(
          Array.from({ length: PER_ROUND }, async (_, i) => {
            const poison = i % POISONED_EVERY === 3;
            return { poison, id: await world.start("fault.poison", { poison, steps: 3 }) };
          }),
        );
        for (const { poison, id } of started) {
          if (poison) {
            const failed = await world.waitForView(id, "failed", (v) => v.status === "failed", 30_000);
            expect(failed.failure?.code).toBe(ENGINE_ERRORS.RESULT_NOT_STORABLE);
            expect(failed.failure?.message).toContain('"p1"');
            // The poisoned step ran once; the step after it never ran.
            expect(counts(await world.sideEffects(id))).toEqual({ p0: 1, p1: 1 });
          } else {
            const done = await world.waitForCompleted(id);
            expect(done.output).toEqual({ values: ["ok-0", "ok-1", "ok-2"] });
            expect(counts(await world.sideEffects(id))).toEqual({ p0: 1, p1: 1, p2: 1 });
          }
        }
      }
      const { rows } = await world.db.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM executions WHERE status NOT IN ('completed', 'failed')",
      );
      expect(rows[0]?.n).toBe(0);
    },
    chaosTimeout(rounds, 30_000),
  );
});
