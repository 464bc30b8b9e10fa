import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killAllProcesses, waitUntil } from "../support/processes.js";
import { createFaultWorld, type FaultWorld } from "./fault-harness.js";

/**
 * A runner frozen past its lock window (SIGSTOP: a GC pause, a stopped VM) while another takes
 * its execution over and finishes it. When it wakes, BullMQ's lock is not what protects the
 * execution: PostgreSQL's turn fence refuses its late writes (docs/engine.md, "Fencing").
 */

let world: FaultWorld;

beforeAll(async () => {
  world = await createFaultWorld(import.meta.url);
});

afterAll(async () => {
  await killAllProcesses();
  await world?.close();
});

interface JournalRow {
  position: number;
  name: string;
  turn: number;
}

describe("a stale runner", () => {
  it("resumed after another runner finished its execution is fenced: none of its writes land", async () => {
    const a = await world.startRunner("A");
    const gate = "stale-runner";
    const id = await world.start("fault.steps", { steps: 3, gateAt: 1, gate });
    await waitUntil("s1 running on runner A", async () => (await world.sideEffects(id)).s1?.length === 1);
    a.signal("SIGSTOP");

    const b = await world.startRunner("B");
    // B re-running s1's work proves A's lock expired and B owns the execution with a newer turn.
    await waitUntil("runner B re-running s1", async () => (await world.sideEffects(id)).s1?.[1] === b.pid);
    await world.openGate(gate);
    const done = await world.waitForCompleted(id);
    expect(done.output).toEqual({ pids: [a.pid, b.pid, b.pid] });
    const before = await readRow(id);

    // A wakes inside s1's work, with the gate now open: it finishes the work and tries to checkpoint.
    a.signal("SIGCONT");
    await a.waitFor(/turn fenced: another runner advanced this execution/, 30_000);

    const after = await readRow(id);
    expect(after).toEqual(before);
    expect(after.status).toBe("completed");
    expect(after.output).toEqual({ pids: [a.pid, b.pid, b.pid] });
    const journal = await journalRows(id);
    expect(journal.map((e) => [e.position, e.name])).toEqual([
      [0, "s0"],
      [1, "s1"],
      [2, "s2"],
    ]);
    // s0 was A's (its turn); s1 and s2 were written by B's later turn, not by A's late checkpoint.
    const [s0, s1, s2] = journal as [JournalRow, JournalRow, JournalRow];
    expect(s1.turn).toBeGreaterThan(s0.turn);
    expect(s2.turn).toBe(s1.turn);
    expect(s1.turn).toBe(after.turn);
    expect((await world.sideEffects(id)).s1).toEqual([a.pid, b.pid]);
    // A survives the refusal and keeps serving.
    expect(a.running()).toBe(true);
    await Promise.all([a.kill(), b.kill()]);
  });
});

async function readRow(id: string) {
  const { rows } = await world.db.pool.query<{
    status: string;
    output: unknown;
    turn: number;
    updated_at: Date;
  }>("SELECT status, output, turn, updated_at FROM executions WHERE id = $1", [id]);
  return rows[0] as NonNullable<(typeof rows)[0]>;
}

async function journalRows(id: string): Promise<JournalRow[]> {
  const { rows } = await world.db.pool.query<JournalRow>(
    "SELECT position, name, turn FROM journal_entries WHERE execution_id = $1 ORDER BY position",
    [id],
  );
  return rows;
}
