import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFaultWorld, FAST_DURABLE, type FaultWorld, waitsFor } from "../runtime/fault-harness.js";
import { entryCommand } from "../support/fast-entry.js";
import { killAllProcesses, spawnProcess } from "../support/processes.js";
import { chaosRounds, chaosTimeout } from "./chaos-rounds.js";

/**
 * Chaos: a lost wake. A sender process commits a signal to an execution parked on it (no
 * deadline: only a wake-up moves it) and is killed with kill -9 before it wakes the execution.
 * The runner's sweep must wake it within one sweep interval (docs/engine.md, "Wake-ups without loss"): every
 * execution completes with the signal's value, none is lost, none stays parked.
 */

const rounds = chaosRounds();
const PER_ROUND = 3;
let world: FaultWorld;

beforeAll(async () => {
  // A long grace: the missing-job repair cannot act, only the satisfied-wait repair.
  world = await createFaultWorld(import.meta.url, {
    durable: { ...FAST_DURABLE, sweep: { intervalMs: 500, graceMs: 3_600_000 } },
  });
  await world.startRunner("chaos-runner");
});

afterAll(async () => {
  await killAllProcesses();
  await world?.close();
});

describe("chaos: a sender killed between commit and wake", () => {
  it(
    `every parked execution still gets its signal (${rounds} round(s) of ${PER_ROUND})`,
    async () => {
      for (let round = 0; round < rounds; round++) {
        const ids = await Promise.all(
          Array.from({ length: PER_ROUND }, () => world.start("fault.waits", { sleepMs: 1, signal: true })),
        );
        for (const id of ids)
          await world.waitForView(id, "waiting on signal go", (v) => waitsFor(v, "signal", "go"));
        for (const [i, id] of ids.entries()) {
          const value = `r${round}-${i}`;
          const sender = spawnProcess(
            `sender ${value}`,
            ...entryCommand("test/chaos/fixtures/wake-sender.ts", [id, "go", JSON.stringify({ value })]),
            { env: { DATABASE_URL: world.db.url } },
          );
          await sender.waitFor(/"committed":true/, 30_000);
          await sender.kill();
        }
        for (const [i, id] of ids.entries()) {
          // Bound: one sweep interval (500 ms) plus a turn; the slack is for a loaded machine.
          const done = await world.waitForCompleted(id, 15_000);
          expect(done.output).toEqual({ value: `r${round}-${i}` });
        }
      }
      const { rows } = await world.db.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM executions WHERE status <> 'completed'",
      );
      expect(rows[0]?.n).toBe(0);
    },
    chaosTimeout(rounds, 30_000),
  );
});
