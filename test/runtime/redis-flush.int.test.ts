import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killAllProcesses, waitUntil } from "../support/processes.js";
import { counts, createFaultWorld, type FaultWorld, startMixedExecutions } from "./fault-harness.js";
import { type OwnRedis, startOwnRedis } from "./own-redis.js";

/**
 * Redis loses everything (FLUSHALL) while executions are in steps, on timers and on signals.
 * PostgreSQL is the ledger: the sweep finds every unfinished execution without a live job and
 * re-enqueues it (docs/engine.md, "Redis is not the ledger"), so all of them complete. Runs against
 * a redis-server of its own.
 */

let redis: OwnRedis;
let world: FaultWorld;

beforeAll(async () => {
  redis = await startOwnRedis({ appendOnly: false });
  world = await createFaultWorld(import.meta.url, { redisUrl: redis.url });
});

afterAll(async () => {
  // The world first: killAllProcesses also ends the redis-server, which closing the queue needs.
  await world?.close();
  await killAllProcesses();
  await redis?.stop();
});

describe("Redis flushed mid-run", () => {
  it("the sweep re-enqueues every unfinished execution and all complete, consuming later signals", async () => {
    const a = await world.startRunner("A");
    const b = await world.startRunner("B");
    const gate = "flush";
    const { inStep, onTimer, onSignal } = await startMixedExecutions(world, { gate, sleepMs: 4_000 });

    expect(await world.redis.flushall()).toBe("OK");
    for (const id of [...inStep, ...onTimer, ...onSignal])
      expect(await world.queue.queue.getJob(id)).toBeUndefined();

    // Every execution gets its job back from the sweep. Those in a step start a new turn: on the
    // other runner it re-runs the interrupted step's work while the old turn still blocks on the
    // gate; on the same runner the new processing abandons the old one first (one processing per
    // job per runner). Either way no finished step runs again.
    for (const id of [...inStep, ...onTimer, ...onSignal]) {
      await waitUntil(`a job for ${id} again`, async () => {
        if ((await world.view(id)).status === "completed") return true;
        return (await world.queue.queue.getJob(id)) !== undefined;
      });
    }
    await waitUntil("a sweep log line", () =>
      /sweep re-enqueued executions without a live job/.test(a.stdout() + b.stdout()),
    );

    await world.openGate(gate);
    for (const id of onSignal) await world.client.signal(id, "go", { value: `after-flush-${id}` });

    for (const id of inStep) {
      await world.waitForCompleted(id);
      const effects = counts(await world.sideEffects(id));
      // s1 was in flight at the flush: a new turn may run it again; s0 and s2 never run twice.
      expect(effects).toEqual({ s0: 1, s1: effects.s1, s2: 1 });
      expect(effects.s1).toBeGreaterThanOrEqual(1);
      expect(effects.s1).toBeLessThanOrEqual(2);
    }
    for (const id of onTimer) {
      expect((await world.waitForCompleted(id)).output).toEqual({ value: "no-signal" });
      expect(counts(await world.sideEffects(id))).toEqual({ before: 1, after: 1 });
    }
    for (const id of onSignal) {
      expect((await world.waitForCompleted(id)).output).toEqual({ value: `after-flush-${id}` });
      expect(counts(await world.sideEffects(id))).toEqual({ before: 1, after: 1 });
    }
    const { rows } = await world.db.pool.query<{ unconsumed: number }>(
      "SELECT count(*)::int AS unconsumed FROM signals WHERE consumed_at IS NULL",
    );
    expect(rows[0]?.unconsumed).toBe(0);
  });
});
