import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecutionView } from "../../src/engine/execution-client.js";
import { PgExecutionCommands } from "../../src/store/pg-execution-commands.js";
import { PgWaitProbe } from "../../src/store/pg-wait-probe.js";
import { killAllProcesses, waitUntil } from "../support/processes.js";
import { counts, createFaultWorld, type FaultWorld, waitsFor } from "./fault-harness.js";

/**
 * Pause and unpause against real runner processes (docs/engine.md, "Pause"): a paused run finishes
 * the step it is in, takes no new step, stays paused across a runner killed with SIGKILL and a new
 * one, keeps the signals and timers that arrive meanwhile, and goes on from where it stopped once
 * unpaused. The marks and wakes are the API's own (src/api/executions/pause-routes.ts).
 */

let world: FaultWorld;
let commands: PgExecutionCommands;
const ORG = "default";
const operator = {
  keyId: "00000000-0000-4000-8000-00000000000a",
  name: "ops",
  subject: "alice",
  role: "operator",
};

beforeAll(async () => {
  world = await createFaultWorld(import.meta.url);
  commands = new PgExecutionCommands(world.db.pool);
});

afterAll(async () => {
  await killAllProcesses();
  await world?.close();
});

/** What the pause route does: record the pause, then ring the run's doorbell. */
async function pause(id: string, reason: string | null = null) {
  const result = await commands.pause(ORG, id, { at: new Date().toISOString(), by: operator, reason });
  if (result.kind !== "paused") throw new Error(`pause refused: ${JSON.stringify(result)}`);
  await world.queue.wake(id);
  return result;
}

async function unpause(id: string) {
  const result = await commands.unpause(ORG, id);
  if (result.kind !== "unpaused") throw new Error(`unpause refused: ${JSON.stringify(result)}`);
  await world.queue.wake(id);
}

const parkedOnPause = (v: ExecutionView) =>
  v.status === "waiting" && v.waitingFor?.length === 1 && waitsFor(v, "pause", "operator");

async function turnOf(id: string): Promise<number> {
  const { rows } = await world.db.pool.query("SELECT turn FROM executions WHERE id = $1", [id]);
  return rows[0].turn as number;
}

describe("a paused run", () => {
  it("finishes the step it is in, takes no new one, stays paused across kill -9 and a new runner, and completes once unpaused", async () => {
    const a = await world.startRunner("A");
    const gate = "pause-in-step";
    const id = await world.start("fault.steps", { steps: 3, gateAt: 1, gate });
    await waitUntil("inside s1 on runner A", async () => (await world.sideEffects(id)).s1?.length === 1);
    const paused = await pause(id, "checking the recipient");
    expect(paused.pause).toMatchObject({ by: { subject: "alice" }, reason: "checking the recipient" });
    // The turn learns of the pause before its next step once it has run for half the lock window
    // (1 s with these settings): s1 is held open past that, then let go.
    await waitUntil("s1 running for 1.5 s", async () => {
      const { rows } = await world.db.pool.query(
        "SELECT now() - at > interval '1.5 seconds' AS long FROM side_effects WHERE execution_id = $1 AND step = 's1'",
        [id],
      );
      return rows[0]?.long === true;
    });
    await world.openGate(gate);

    const view = await world.waitForView(id, "parked on its pause", parkedOnPause);
    expect(view.waitingFor?.[0]?.details).toMatchObject({
      by: { subject: "alice" },
      reason: "checking the recipient",
    });
    expect(view.wakeAt).toBeNull();
    expect((await world.journal(id)).map((e) => [e.name, e.state])).toEqual([
      ["s0", "ok"],
      ["s1", "ok"],
    ]);
    expect(counts(await world.sideEffects(id))).toEqual({ s0: 1, s1: 1 });

    // Killed and replaced, the run is still paused: a turn on the new runner parks it again.
    await a.kill();
    const b = await world.startRunner("B");
    const before = await turnOf(id);
    await world.queue.wake(id);
    await waitUntil("a turn on runner B", async () => (await turnOf(id)) > before);
    await world.waitForView(id, "parked on its pause again", parkedOnPause);
    expect(counts(await world.sideEffects(id))).toEqual({ s0: 1, s1: 1 });

    await unpause(id);
    const done = await world.waitForCompleted(id);
    expect(done.output).toEqual({ pids: [a.pid, a.pid, b.pid] });
    // Nothing finished ran again, nothing was lost.
    expect(counts(await world.sideEffects(id))).toEqual({ s0: 1, s1: 1, s2: 1 });
    expect((await world.journal(id)).map((e) => [e.position, e.name, e.state])).toEqual([
      [0, "s0", "ok"],
      [1, "s1", "ok"],
      [2, "s2", "ok"],
    ]);
    await b.kill();
  });

  it("keeps a signal sent while paused and lets a timer that fell due wait until the unpause", async () => {
    const a = await world.startRunner("C");
    const id = await world.start("fault.waits", { sleepMs: 1_500, signal: true });
    await world.waitForView(id, "waiting on timer nap", (v) => waitsFor(v, "timer", "nap"));
    await pause(id);
    await world.waitForView(id, "parked on its pause", parkedOnPause);

    const before = await turnOf(id);
    await world.client.signal(id, "go", { value: "sent-while-paused" });
    await waitUntil("the signal's wake took a turn", async () => (await turnOf(id)) > before);
    // The timer's wake time passes while paused: the run stays parked, the step after it never runs.
    await waitUntil("the timer nap is due", async () => {
      const { rows } = await world.db.pool.query(
        "SELECT (result->>'wakeAt')::timestamptz < now() AS due FROM journal_entries WHERE execution_id = $1 AND name = 'nap'",
        [id],
      );
      return rows[0]?.due === true;
    });
    const woken = await turnOf(id);
    await world.queue.wake(id);
    await waitUntil("one more turn after the timer was due", async () => (await turnOf(id)) > woken);
    const view = await world.waitForView(id, "still parked on its pause", parkedOnPause);
    expect(view.status).toBe("waiting");
    expect(await world.sideEffects(id)).toEqual({ before: [a.pid] });
    const { rows } = await world.db.pool.query(
      "SELECT consumed_at FROM signals WHERE execution_id = $1 AND name = 'go'",
      [id],
    );
    expect(rows).toEqual([{ consumed_at: null }]);

    await unpause(id);
    const done = await world.waitForCompleted(id);
    expect(done.output).toEqual({ value: "sent-while-paused" });
    expect(await world.sideEffects(id)).toEqual({ before: [a.pid], after: [a.pid] });
    await a.kill();
  });

  it("shows a pause that met its parking turn still running: the sweep wakes it onto its pause", async () => {
    const a = await world.startRunner("F");
    const id = await world.start("fault.waits", { sleepMs: 60_000, signal: false });
    await world.waitForView(id, "waiting on timer nap", (v) => waitsFor(v, "timer", "nap"));
    // The mark without the wake: what a pause leaves when its wake found the job still active
    // (the turn was parking it), and the turn's own recheck after parking had already run.
    expect(
      (await commands.pause(ORG, id, { at: new Date().toISOString(), by: operator, reason: null })).kind,
    ).toBe("paused");
    expect(await new PgWaitProbe(world.db.pool).satisfiable(id)).toBe(true);
    await world.waitForView(id, "parked on its pause, not on the timer's minute", parkedOnPause);
    await a.kill();
  });

  it("is woken by the sweep when an unpause's wake was lost", async () => {
    const a = await world.startRunner("D");
    const id = await world.start("fault.waits", { sleepMs: 60_000, signal: false });
    await world.waitForView(id, "waiting on timer nap", (v) => waitsFor(v, "timer", "nap"));
    await pause(id);
    await world.waitForView(id, "parked on its pause", parkedOnPause);
    // The mark without the wake: what an api that died between the two leaves behind.
    expect((await commands.unpause(ORG, id)).kind).toBe("unpaused");
    expect(await new PgWaitProbe(world.db.pool).satisfiable(id)).toBe(true);
    await world.waitForView(
      id,
      "back on its timer",
      (v) => waitsFor(v, "timer", "nap") && !waitsFor(v, "pause"),
    );
    await a.kill();
  });
});

describe("pause and unpause requests", () => {
  it("refuse a finished run and an unpause of a run that is not paused, and keep the first pause", async () => {
    const a = await world.startRunner("E");
    const id = await world.start("fault.steps", { steps: 1 });
    await world.waitForCompleted(id);
    expect(
      await commands.pause(ORG, id, { at: new Date().toISOString(), by: operator, reason: null }),
    ).toEqual({
      kind: "terminal",
      status: "completed",
    });
    expect(await commands.unpause(ORG, id)).toEqual({ kind: "terminal", status: "completed" });
    expect(await commands.pause("another-org", id, { at: "x", by: null, reason: null })).toEqual({
      kind: "not-found",
    });

    const waiting = await world.start("fault.waits", { sleepMs: 60_000, signal: false });
    await world.waitForView(waiting, "waiting on timer nap", (v) => waitsFor(v, "timer", "nap"));
    expect(await commands.unpause(ORG, waiting)).toEqual({ kind: "not-paused", status: "waiting" });
    const first = await pause(waiting, "first");
    const second = await commands.pause(ORG, waiting, {
      at: new Date().toISOString(),
      by: { ...operator, subject: "bob" },
      reason: "second",
    });
    expect(second).toMatchObject({ kind: "paused", pause: first.pause });
    await a.kill();
  });
});
