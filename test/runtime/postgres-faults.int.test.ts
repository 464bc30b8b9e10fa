import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VICTIM_APPLICATION_NAME } from "../fixtures/fault-workflows.js";
import { killAllProcesses, waitUntil } from "../support/processes.js";
import { createFaultWorld, type FaultWorld, waitsFor } from "./fault-harness.js";

/**
 * PostgreSQL connections dropped under the engine (pg_terminate_backend, as a failover or an
 * operator would): a step whose work keeps failing suspends for recovery and resumes once the
 * database is reachable again (docs/engine.md, "Statuses"), and a runner whose own pool keeps losing
 * connections still brings its executions to completion.
 */

/** Application name of the runner's pool (connectDependencies(config, "runner")). */
const RUNNER_APPLICATION_NAME = "tenor-runner";

let world: FaultWorld;

beforeAll(async () => {
  world = await createFaultWorld(import.meta.url);
});

afterAll(async () => {
  await killAllProcesses();
  await world?.close();
});

/**
 * Terminates, every `everyMs`, the backends of this test's database with `applicationName`,
 * until stopped; `stop()` returns how many it terminated.
 */
function startBackendKiller(applicationName: string, everyMs: number): { stop(): Promise<number> } {
  let killed = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await world.db.pool.query<{ terminated: boolean }>(
        `SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
         WHERE datname = current_database() AND application_name = $1 AND pid <> pg_backend_pid()`,
        [applicationName],
      );
      killed += rows.filter((r) => r.terminated).length;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return killed;
    },
  };
}

/** How many steps of `fault.steps` have run, counted from their side effects. */
async function stepsRun(): Promise<number> {
  const { rows } = await world.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM side_effects");
  return rows[0]?.n ?? 0;
}

/**
 * Terminates the backends of `applicationName` that are running a statement, but only after the
 * runner has made progress since the previous kill (one more step run). A killer on a fixed clock
 * starves a runner on a loaded machine — no connection lives long enough to finish a transaction —
 * and then proves nothing; this one lands every kill on a query in flight and still lets work through.
 */
function startProgressPacedKiller(applicationName: string): { stop(): Promise<number>; killed(): number } {
  let killed = 0;
  let running = true;
  const pause = () => new Promise((resolve) => setTimeout(resolve, 5));
  const loop = (async () => {
    let seen = await stepsRun();
    while (running) {
      const now = await stepsRun();
      if (now === seen) {
        await pause();
        continue;
      }
      const { rows } = await world.db.pool.query<{ terminated: boolean }>(
        `SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
         WHERE datname = current_database() AND application_name = $1 AND state = 'active'
           AND pid <> pg_backend_pid()`,
        [applicationName],
      );
      const terminated = rows.filter((r) => r.terminated).length;
      killed += terminated;
      if (terminated > 0) seen = now;
      else await pause();
    }
  })();
  return {
    killed: () => killed,
    async stop() {
      running = false;
      await loop;
      return killed;
    },
  };
}

describe("PostgreSQL connections terminated", () => {
  it("a step whose queries keep failing suspends for recovery, then resumes and completes", async () => {
    const a = await world.startRunner("A");
    const killer = startBackendKiller(VICTIM_APPLICATION_NAME, 25);
    const id = await world.start("fault.pg-victim", { queryMs: 500 });
    // Two failed recovery turns in a row: the suspension is repeated, not a one-off.
    const suspended = await world.waitForView(
      id,
      "suspended for recovery of step query, twice",
      (v) => v.status === "suspended" && waitsFor(v, "recovery", "query") && v.recoveryAttempts >= 2,
    );
    expect(suspended.waitingFor?.[0]?.details).toMatchObject({ attempts: 2 });
    expect(await killer.stop()).toBeGreaterThanOrEqual(4);
    expect(await world.sideEffects(id)).toEqual({});

    const done = await world.waitForCompleted(id);
    expect(done.output).toEqual({ ok: true });
    expect(done.recoveryAttempts).toBe(0);
    const journal = await world.journal(id);
    expect(journal.map((e) => [e.name, e.state])).toEqual([["query", "ok"]]);
    expect((await world.sideEffects(id)).query).toHaveLength(1);
    await a.kill();
  });

  it("a runner whose own pool connections are killed mid-run still completes every execution", async () => {
    const b = await world.startRunner("B");
    const steps = 40;
    const killer = startProgressPacedKiller(RUNNER_APPLICATION_NAME);
    const ids = await Promise.all(
      Array.from({ length: 5 }, () => world.start("fault.steps", { steps, workMs: 10 })),
    );
    try {
      // Keep killing until several kills have landed on the runner's queries in flight (the
      // killer terminates only backends running a statement) and the executions are half-way
      // through their steps. The runner's log is no measure: most killed statements are retried
      // without a line, and on an idle machine 31 kills landed while it logged one.
      await waitUntil("half of all steps run, and three runner queries killed in flight", async () => {
        const run = await stepsRun();
        if (run >= (ids.length * steps) / 2 && killer.killed() >= 3) return true;
        throw new Error(`${run} steps run, ${killer.killed()} runner queries killed in flight`);
      });
    } finally {
      expect(await killer.stop()).toBeGreaterThanOrEqual(3);
    }

    for (const id of ids) {
      const view = await world.waitForCompleted(id, 45_000);
      expect((view.output as { pids: number[] }).pids).toHaveLength(steps);
      const journal = await world.journal(id);
      expect(journal.map((e) => e.position)).toEqual(Array.from({ length: steps }, (_, i) => i));
      const effects = await world.sideEffects(id);
      expect(Object.keys(effects)).toHaveLength(steps);
    }
    await b.kill();
  });
});
