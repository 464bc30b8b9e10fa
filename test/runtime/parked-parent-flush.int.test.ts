import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childExecutionId } from "../../src/engine/context.js";
import { killAllProcesses, waitUntil } from "../support/processes.js";
import { counts, createFaultWorld, type FaultWorld, waitsFor } from "./fault-harness.js";
import { type OwnRedis, startOwnRedis } from "./own-redis.js";

/**
 * A parent parked on a running child when Redis loses everything (FLUSHALL): the sweep adds both
 * jobs back, but the parent's no longer depends on the child's in BullMQ. The re-added parent
 * takes one turn, finds its child still running in PostgreSQL and parks until the child's finish
 * wakes it (docs/engine.md, "Redis is not the ledger"); it must not re-run turns in a loop while
 * the child works. Runs against a redis-server of its own.
 */

let redis: OwnRedis;
let world: FaultWorld;

beforeAll(async () => {
  redis = await startOwnRedis({ appendOnly: false });
  world = await createFaultWorld(import.meta.url, { redisUrl: redis.url });
});

afterAll(async () => {
  await world?.close();
  await killAllProcesses();
  await redis?.stop();
});

async function turnOf(id: string): Promise<number> {
  const { rows } = await world.db.pool.query<{ turn: number }>("SELECT turn FROM executions WHERE id = $1", [
    id,
  ]);
  return rows[0]?.turn ?? -1;
}

/** Time the parent is watched with its child still running, after the sweep gave it its job back. */
const WATCH_MS = 5_000;

describe("a parked parent after Redis lost its job", () => {
  it("takes one turn when re-added and parks again until its child finishes", async () => {
    await world.startRunner("A");
    const gate = "child-gate";
    const parent = await world.start("fault.parent", { gate });
    await world.waitForView(parent, "parked on its child", (v) => waitsFor(v, "child"));
    const childId = childExecutionId(parent, 0);
    await waitUntil(
      "the child inside its gated step",
      async () => (await world.sideEffects(childId)).s0?.length === 1,
    );
    const parkedTurn = await turnOf(parent);

    expect(await world.redis.flushall()).toBe("OK");
    await waitUntil(
      "the parent's job added back by the sweep",
      async () => (await world.queue.queue.getJob(parent)) !== undefined,
    );
    // Watch the parent while its child is still inside its step.
    await new Promise((resolve) => setTimeout(resolve, WATCH_MS));
    expect((await world.view(childId)).status).toBe("running");
    const turnsWhileChildRuns = (await turnOf(parent)) - parkedTurn;
    expect(turnsWhileChildRuns).toBeLessThanOrEqual(1);
    expect(waitsFor(await world.view(parent), "child")).toBe(true);

    await world.openGate(gate);
    const done = await world.waitForCompleted(parent);
    expect(done.output).toMatchObject({ pids: [expect.any(Number)] });
    // The child's step ran again only because the flush caught it inside (its new turn re-ran it).
    expect(counts(await world.sideEffects(childId)).s0).toBeLessThanOrEqual(2);
    expect((await turnOf(parent)) - parkedTurn).toBeLessThanOrEqual(2);
  });
});
