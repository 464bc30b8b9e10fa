import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isStopped, killAllProcesses, waitUntil } from "../support/processes.js";
import { counts, createFaultWorld, FAST_DURABLE, type FaultWorld } from "./fault-harness.js";

/**
 * Takeover from runner liveness (src/ownership/runner-liveness.ts): a runner's PostgreSQL session
 * is its heartbeat, so when the process dies a survivor moves its active jobs back to wait at
 * once, without waiting for lock expiry; a stopped but alive runner keeps its session and is
 * taken over only by lock expiry, and fenced when it resumes. Real runner processes.
 */

let world: FaultWorld;

beforeAll(async () => {
  world = await createFaultWorld(import.meta.url);
});

afterAll(async () => {
  await killAllProcesses();
  await world?.close();
});

/** Runner ids registered for liveness under this world's prefix, with their pids. */
async function registeredPids(): Promise<number[]> {
  const all = await world.redis.hgetall(`${world.prefix}:runners`);
  return Object.values(all).map((text) => (JSON.parse(text) as { pid: number }).pid);
}

const TAKEOVER_LOG = /took over the jobs of a runner whose session ended/;

describe("runner liveness", () => {
  it("leaves a stopped runner's jobs to lock expiry, and fences it when it resumes", async () => {
    const durable = { ...FAST_DURABLE, liveness: { checkIntervalMs: 200 } };
    const a = await world.startRunner("A", { durable });
    const gate = "liveness-stop";
    const id = await world.start("fault.steps", { steps: 3, gateAt: 1, gate });
    await waitUntil("A inside s1", async () => (await world.sideEffects(id)).s1?.[0] === a.pid);
    a.signal("SIGSTOP");
    await waitUntil("runner A stopped", () => isStopped(a));
    const b = await world.startRunner("B", { durable });

    // B takes the job by lock expiry (2 s + 1 s) and blocks inside s1 as A did.
    await waitUntil("B inside s1", async () => (await world.sideEffects(id)).s1?.[1] === b.pid, {
      timeoutMs: 30_000,
    });
    // A's session is alive: it is still registered, and nobody took its jobs for dead.
    expect((await registeredPids()).sort()).toEqual([a.pid, b.pid].sort());
    expect(b.stdout()).not.toMatch(TAKEOVER_LOG);

    await world.openGate(gate);
    const done = await world.waitForCompleted(id);
    a.signal("SIGCONT");
    await a.waitFor(/turn fenced|fenced/);
    expect(done.output).toEqual({ pids: [a.pid, b.pid, b.pid] });
    expect(await world.sideEffects(id)).toEqual({ s0: [a.pid], s1: [a.pid, b.pid], s2: [b.pid] });
    expect(a.running()).toBe(true);
    await Promise.all([a.kill(), b.kill()]);
  });

  // Last: its runners' minute-long stalled interval keeps BullMQ's queue-wide stalled-check key
  // for a minute, which would hold up the lock-expiry takeover another test waits for.
  it("moves a runner's jobs the moment kill -9 ends its session, long before its locks expire", async () => {
    // Locks of a minute: past the test's timeout, so only liveness can explain the takeover.
    const durable = {
      ...FAST_DURABLE,
      lock: { lockDurationMs: 60_000, stalledIntervalMs: 60_000 },
      liveness: { checkIntervalMs: 200 },
    };
    const a = await world.startRunner("A", { durable });
    const b = await world.startRunner("B", { durable });
    await waitUntil("both runners registered", async () => (await registeredPids()).length === 2);
    const gate = "liveness-kill";
    // Started while both run: some land on A, some on B; each blocks inside s1's work.
    const ids = await Promise.all(
      Array.from({ length: 6 }, () => world.start("fault.steps", { steps: 3, gateAt: 1, gate })),
    );
    const onA: string[] = [];
    for (const id of ids) {
      await waitUntil(
        `execution ${id} inside s1`,
        async () => (await world.sideEffects(id)).s1?.length === 1,
      );
      if ((await world.sideEffects(id)).s1?.[0] === a.pid) onA.push(id);
    }
    // Six executions over two runners: if all landed on B, A had nothing to lose; kill B instead.
    const [dead, survivor] = onA.length > 0 ? [a, b] : [b, a];
    const affected = onA.length > 0 ? onA : ids;

    await dead.kill();
    await world.openGate(gate);
    for (const id of ids) await world.waitForCompleted(id, 45_000);
    await survivor.waitFor(TAKEOVER_LOG, 5_000);
    for (const id of affected) {
      const effects = await world.sideEffects(id);
      // s0 ran once on the dead runner; s1 was interrupted there (not journaled) and ran again
      // on the survivor, the only step allowed to; s2 ran once.
      expect(counts(effects)).toEqual({ s0: 1, s1: 2, s2: 1 });
      expect(effects.s1).toEqual([dead.pid, survivor.pid]);
    }
    for (const id of ids.filter((i) => !affected.includes(i)))
      expect(counts(await world.sideEffects(id))).toEqual({ s0: 1, s1: 1, s2: 1 });
    expect(await registeredPids()).toEqual([survivor.pid]);
    await survivor.kill();
  });
});
