import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killAllProcesses } from "../support/processes.js";
import { counts, createFaultWorld, type FaultWorld, startMixedExecutions } from "./fault-harness.js";
import { type OwnRedis, startOwnRedis } from "./own-redis.js";

/**
 * Redis killed and restarted on the same port (field lesson: BullMQ workers go quiet after a
 * Redis restart unless their connection has maxRetriesPerRequest null, #648 #2964). The runners
 * must reconnect by themselves: in-flight executions complete and new ones start and finish.
 */

let redis: OwnRedis;
let world: FaultWorld;

beforeAll(async () => {
  redis = await startOwnRedis({ appendOnly: true });
  world = await createFaultWorld(import.meta.url, { redisUrl: redis.url });
});

afterAll(async () => {
  // The world first: killAllProcesses also ends the redis-server, which closing the queue needs.
  await world?.close();
  await killAllProcesses();
  await redis?.stop();
});

describe("Redis restarted mid-run", () => {
  it("runners reconnect: in-flight executions complete and new ones start", async () => {
    const a = await world.startRunner("A");
    const gate = "restart";
    const { inStep, onTimer, onSignal } = await startMixedExecutions(world, { gate, sleepMs: 3_000 });

    await redis.kill();
    // The runner notices Redis is gone before it comes back.
    await a.waitFor(/"message":"worker error"/, 15_000);
    await redis.restart();

    await world.openGate(gate);
    for (const id of onSignal) await world.client.signal(id, "go", { value: `after-restart-${id}` });
    const fresh = await Promise.all(
      Array.from({ length: 2 }, () => world.start("fault.steps", { steps: 2 })),
    );

    for (const id of fresh) {
      expect((await world.waitForCompleted(id)).output).toEqual({ pids: [a.pid, a.pid] });
      expect(counts(await world.sideEffects(id))).toEqual({ s0: 1, s1: 1 });
    }
    for (const id of inStep) {
      await world.waitForCompleted(id);
      const effects = counts(await world.sideEffects(id));
      // s1 may have run again if its lock expired while Redis was down; s0 was journaled before.
      expect(effects.s0).toBe(1);
      expect(effects.s2).toBeGreaterThanOrEqual(1);
    }
    for (const id of onTimer) {
      expect((await world.waitForCompleted(id)).output).toEqual({ value: "no-signal" });
      expect(counts(await world.sideEffects(id))).toEqual({ before: 1, after: 1 });
    }
    for (const id of onSignal) {
      expect((await world.waitForCompleted(id)).output).toEqual({ value: `after-restart-${id}` });
      expect(counts(await world.sideEffects(id))).toEqual({ before: 1, after: 1 });
    }
    expect(a.running()).toBe(true);
  });
});
