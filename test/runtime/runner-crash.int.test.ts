import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killAllProcesses, waitUntil } from "../support/processes.js";
import { counts, createFaultWorld, type FaultWorld, waitsFor } from "./fault-harness.js";

/**
 * Runners killed with SIGKILL (docs/engine.md, "Crash recovery and the lock window"): another
 * runner resumes their executions from the journal, re-running only the step whose work was
 * interrupted, and durable waits survive. Real processes, Redis and PostgreSQL; the side_effects
 * table counts every run of a step's work.
 */

let world: FaultWorld;

beforeAll(async () => {
  world = await createFaultWorld(import.meta.url);
});

afterAll(async () => {
  await killAllProcesses();
  await world?.close();
});

interface TakeoverLine {
  runner: string;
  previousRunner: string;
  executions: number;
  afterMs: number;
}

function takeoverLines(stdout: string): TakeoverLine[] {
  return stdout
    .split("\n")
    .filter((line) => line.includes("took over executions of a runner"))
    .map((line) => JSON.parse(line) as TakeoverLine);
}

describe("a runner killed with SIGKILL", () => {
  it("inside a step's work: every execution completes, finished steps ran once, the interrupted one twice", async () => {
    const a = await world.startRunner("A");
    const gate = "crash-in-step";
    const ids = await Promise.all(
      Array.from({ length: 4 }, () => world.start("fault.steps", { steps: 4, gateAt: 2, gate })),
    );
    // Each execution has journaled s0 and s1 and is blocked inside s2's work, on runner A.
    for (const id of ids) {
      await waitUntil(`execution ${id} inside s2 on runner A`, async () => {
        const effects = await world.sideEffects(id);
        return effects.s2?.length === 1 && effects.s2[0] === a.pid;
      });
    }
    const b = await world.startRunner("B");
    const killedAt = Date.now();
    await a.kill();
    await world.openGate(gate);

    for (const id of ids) {
      const view = await world.waitForCompleted(id);
      expect(view.output).toEqual({ pids: [a.pid, a.pid, b.pid, b.pid] });
      const effects = await world.sideEffects(id);
      expect(counts(effects)).toEqual({ s0: 1, s1: 1, s2: 2, s3: 1 });
      expect(effects.s2).toEqual([a.pid, b.pid]);
      const journal = await world.journal(id);
      expect(journal.map((e) => [e.position, e.name, e.state])).toEqual([
        [0, "s0", "ok"],
        [1, "s1", "ok"],
        [2, "s2", "ok"],
        [3, "s3", "ok"],
      ]);
    }
    // B logs the takeover: the dead runner by name (host:pid:…), how many, how long after its last write.
    const takeovers = await waitUntil("runner B logged the takeover of all 4", async () => {
      const lines = takeoverLines(b.stdout()).filter((line) => line.previousRunner.includes(`:${a.pid}:`));
      return lines.reduce((sum, line) => sum + line.executions, 0) === 4 ? lines : false;
    });
    for (const line of takeovers) {
      expect(line.runner).toContain(`:${b.pid}:`);
      expect(line.afterMs).toBeGreaterThan(0);
    }
    console.info(
      `[fault] takeover after SIGKILL with lock 2000/1000 ms: all 4 executions done ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`,
    );
    await b.kill();
  });

  it("after a step's side effect and before its checkpoint: only that step runs again, on the other runner", async () => {
    const a = await world.startRunner("A", { env: { CRASH_BEFORE_CHECKPOINT: "s1" } });
    const id = await world.start("fault.steps", { steps: 3 });
    const exit = await a.exit;
    expect(exit.signal).toBe("SIGKILL");
    // A died inside the hook: s1's work ran, its checkpoint was never written.
    expect(counts(await world.sideEffects(id))).toEqual({ s0: 1, s1: 1 });
    expect((await world.journal(id)).map((e) => e.name)).toEqual(["s0"]);

    const b = await world.startRunner("B");
    const view = await world.waitForCompleted(id);
    expect(view.output).toEqual({ pids: [a.pid, b.pid, b.pid] });
    const effects = await world.sideEffects(id);
    expect(effects).toEqual({ s0: [a.pid], s1: [a.pid, b.pid], s2: [b.pid] });
    expect((await world.journal(id)).map((e) => [e.position, e.name, e.attempts])).toEqual([
      [0, "s0", 1],
      [1, "s1", 1],
      [2, "s2", 1],
    ]);
    await b.kill();
  });

  it("while executions wait on timers and signals: after a restart timers fire and later signals complete them", async () => {
    const a = await world.startRunner("A");
    const onTimer = await Promise.all(
      Array.from({ length: 3 }, () => world.start("fault.waits", { sleepMs: 3_000, signal: true })),
    );
    const timerOnly = await world.start("fault.waits", { sleepMs: 3_000, signal: false });
    const onSignal = await Promise.all(
      Array.from({ length: 2 }, () => world.start("fault.waits", { sleepMs: 1, signal: true })),
    );
    for (const id of [...onTimer, timerOnly])
      await world.waitForView(id, "waiting on timer nap", (v) => waitsFor(v, "timer", "nap"));
    for (const id of onSignal)
      await world.waitForView(id, "waiting on signal go", (v) => waitsFor(v, "signal", "go"));
    await a.kill();

    // A signal delivered while no runner is alive is kept until one consumes it.
    const [early, late] = onSignal as [string, string];
    await world.client.signal(early, "go", { value: "sent-while-down" });

    const b = await world.startRunner("B");
    await world.waitForCompleted(timerOnly);
    await world.waitForCompleted(early);
    for (const id of onTimer)
      await world.waitForView(id, "timer fired, waiting on signal go", (v) => waitsFor(v, "signal", "go"));
    for (const id of [...onTimer, late]) await world.client.signal(id, "go", { value: `late-${id}` });

    for (const id of [...onTimer, late]) {
      const view = await world.waitForCompleted(id);
      expect(view.output).toEqual({ value: `late-${id}` });
    }
    expect((await world.view(early)).output).toEqual({ value: "sent-while-down" });
    expect((await world.view(timerOnly)).output).toEqual({ value: "no-signal" });
    for (const id of [...onTimer, ...onSignal, timerOnly]) {
      const effects = await world.sideEffects(id);
      expect(effects).toEqual({ before: [a.pid], after: [b.pid] });
    }
    await b.kill();
  });

  it("is taken over within the default lock window (lock 4000 ms, stalled check 3000 ms)", async () => {
    const defaults = { sweep: { intervalMs: 5_000, graceMs: 10_000 } };
    const a = await world.startRunner("A", { durable: defaults });
    const gate = "takeover-default";
    const id = await world.start("fault.steps", { steps: 2, gateAt: 0, gate });
    await waitUntil("s0 running on runner A", async () => (await world.sideEffects(id)).s0?.length === 1);
    const b = await world.startRunner("B", { durable: defaults });

    const killedAt = new Date();
    await a.kill();
    await world.openGate(gate);
    const { rows } = await waitUntil(
      "runner B re-running s0",
      async () => {
        const result = await world.db.pool.query<{ at: Date; pid: number }>(
          "SELECT at, pid FROM side_effects WHERE execution_id = $1 AND step = 's0' ORDER BY n",
          [id],
        );
        return result.rows.length === 2 ? result : false;
      },
      { timeoutMs: 30_000 },
    );
    const takeoverSeconds = ((rows[1]?.at.getTime() ?? 0) - killedAt.getTime()) / 1000;
    console.info(
      `[fault] takeover after SIGKILL with the default lock config: ${takeoverSeconds.toFixed(2)} s`,
    );
    expect(rows[1]?.pid).toBe(b.pid);
    expect(takeoverSeconds).toBeLessThan(30);
    await world.waitForCompleted(id);
    await b.kill();
  });
});
