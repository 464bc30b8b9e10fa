import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executionJobId } from "../../src/transport/queue-names.js";
import { killAllProcesses } from "../support/processes.js";
import { createFaultWorld, type FaultWorld } from "./fault-harness.js";

/**
 * A turn that starts several children creates their rows in one statement and adds their jobs in
 * one pipeline (docs/performance.md, "Where the time goes"). A runner killed between the two
 * leaves child rows without jobs; the survivor's takeover re-runs the parent's turn, which finds
 * the children and dispatches them, and the sweep would add them too: every child runs its step
 * once and the parent completes. Real processes, Redis and PostgreSQL.
 */

let world: FaultWorld;

beforeAll(async () => {
  world = await createFaultWorld(import.meta.url);
});

afterAll(async () => {
  await killAllProcesses();
  await world?.close();
});

describe("a runner killed after creating children and before adding their jobs", () => {
  it("leaves rows without jobs that another runner runs, each child's step once", async () => {
    const a = await world.startRunner("A", { env: { CRASH_BEFORE_CHILD_DISPATCH: "1" } });
    const parentId = await world.start("fault.fanout", { children: 4 });
    const exit = await a.exit;
    expect(exit.signal).toBe("SIGKILL");

    // A died inside the window: all four rows committed together, none of their jobs exists.
    const { rows } = await world.db.pool.query<{ id: string; status: string }>(
      "SELECT id, status FROM executions WHERE parent_id = $1 ORDER BY parent_position",
      [parentId],
    );
    expect(rows.map((r) => r.status)).toEqual(["running", "running", "running", "running"]);
    for (const row of rows) expect(await world.queue.queue.getJob(executionJobId(row.id))).toBeUndefined();

    const b = await world.startRunner("B");
    const view = await world.waitForCompleted(parentId);
    expect(view.output).toEqual({ pids: [b.pid, b.pid, b.pid, b.pid] });
    for (const row of rows) {
      expect((await world.view(row.id)).status).toBe("completed");
      expect(await world.sideEffects(row.id)).toEqual({ s0: [b.pid] });
    }
    await b.kill();
  });
});
