import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isStopped, killAllProcesses, waitUntil } from "../support/processes.js";
import { counts, createFaultWorld, type FaultWorld } from "./fault-harness.js";

/**
 * A runner that was stopped (SIGSTOP: a GC pause, a frozen VM) does not know it slept. After
 * SIGCONT it must prove it still owns the work before any new turn or step (docs/engine.md,
 * "Fencing"), and one process must never process one job twice at once. Real runner processes
 * stop themselves at a chosen point (test/fixtures/runner-process.ts); the test resumes them.
 */

let world: FaultWorld;

beforeAll(async () => {
  world = await createFaultWorld(import.meta.url);
});

afterAll(async () => {
  await killAllProcesses();
  await world?.close();
});

async function journalTurns(id: string): Promise<{ name: string; turn: number }[]> {
  const { rows } = await world.db.pool.query<{ name: string; turn: number }>(
    "SELECT name, turn FROM journal_entries WHERE execution_id = $1 ORDER BY position",
    [id],
  );
  return rows;
}

describe("a stalled runner", () => {
  it("stopped right after it was handed a job takes no turn when it resumes after a takeover", async () => {
    const a = await world.startRunner("A", { env: { STOP_ON_FIRST_TURN: "1" } });
    const id = await world.start("fault.steps", { steps: 3, gateAt: 1, gate: "handed" });
    await a.waitFor(/"stopping":"turn"/);
    await waitUntil("runner A stopped", () => isStopped(a));

    const b = await world.startRunner("B");
    await waitUntil("B inside s1", async () => (await world.sideEffects(id)).s1?.[0] === b.pid);
    // A resumes while B's turn runs: its lock expired, so it must not begin a turn of its own.
    a.signal("SIGCONT");
    await a.waitFor(/turn fenced: another runner advanced this execution/);
    await world.openGate("handed");
    const done = await world.waitForCompleted(id);
    expect(done.output).toEqual({ pids: [b.pid, b.pid, b.pid] });
    expect(counts(await world.sideEffects(id))).toEqual({ s0: 1, s1: 1, s2: 1 });
    // Every position was written by one turn: B's was never fenced out by A.
    const turns = new Set((await journalTurns(id)).map((e) => e.turn));
    expect(turns.size).toBe(1);
    await Promise.all([a.kill(), b.kill()]);
  });

  it("stopped between two steps does not start the next step's work once another runner took over", async () => {
    const a = await world.startRunner("A", { env: { STOP_BEFORE_STEP: "s1" } });
    const id = await world.start("fault.steps", { steps: 3 });
    await a.waitFor(/"stopping":"step","step":"s1"/);
    await waitUntil("runner A stopped", () => isStopped(a));

    const b = await world.startRunner("B");
    const done = await world.waitForCompleted(id);
    expect(done.output).toEqual({ pids: [a.pid, b.pid, b.pid] });
    // A wakes "before s1's work" with a turn that is long stale: it must check its fence first.
    a.signal("SIGCONT");
    await a.waitFor(/turn fenced/);
    expect(await world.sideEffects(id)).toEqual({ s0: [a.pid], s1: [b.pid], s2: [b.pid] });
    expect(a.running()).toBe(true);
    await Promise.all([a.kill(), b.kill()]);
  });

  it("handed its own job again after a stop processes it once, and keeps the lock of the new processing", async () => {
    const a = await world.startRunner("A");
    // s1 blocks on the gate; every step's work then takes 3 s, longer than the 2 s lock.
    const id = await world.start("fault.steps", { steps: 3, gateAt: 1, gate: "twice", workMs: 3_000 });
    await waitUntil("A inside s1", async () => (await world.sideEffects(id)).s1?.length === 1, {
      timeoutMs: 30_000,
    });
    a.signal("SIGSTOP");
    await waitUntil("runner A stopped", () => isStopped(a));
    // Past the lock (2 s) and a stalled check (1 s): on resume A's own checker finds the job
    // stalled and A fetches it again while its first processing still waits inside s1.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    a.signal("SIGCONT");
    await a.waitFor(/job handed to this runner again while an older processing runs/);
    await world.openGate("twice");
    const done = await world.waitForCompleted(id, 60_000);
    expect(done.output).toEqual({ pids: [a.pid, a.pid, a.pid] });
    // The newer processing ran s1 again (the older was stopped inside it; its checkpoint is
    // fenced), then s2 once: its lock was renewed throughout s2's 3 s of work after the older
    // processing ended, so the job was not handed out a third time.
    expect(counts(await world.sideEffects(id))).toEqual({ s0: 1, s1: 2, s2: 1 });
    expect(a.stdout().match(/job handed to this runner again/g)).toHaveLength(1);
    await a.kill();
  });
});
