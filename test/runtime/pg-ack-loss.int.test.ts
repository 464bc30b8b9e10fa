import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killAllProcesses, WaitAborted } from "../support/processes.js";
import { createFaultWorld, type FaultWorld, waitsFor } from "./fault-harness.js";
import { type PgProxy, startPgProxy } from "./pg-proxy.js";

/**
 * A write that committed but whose acknowledgement was lost (the connection died between the
 * server's commit and its reply). The engine retries the write; the retry must recognise its own
 * turn's row instead of reporting a stale fence (which stalls the execution until BullMQ's stall
 * check) or, for a signal, looking for another signal to consume (which parks it forever).
 */

let world: FaultWorld;
let proxy: PgProxy;

beforeAll(async () => {
  world = await createFaultWorld(import.meta.url);
  proxy = await startPgProxy(world.db.url);
});

afterAll(async () => {
  await killAllProcesses();
  await proxy?.close();
  await world?.close();
});

async function turnOf(id: string): Promise<number> {
  const { rows } = await world.db.pool.query<{ turn: number }>("SELECT turn FROM executions WHERE id = $1", [
    id,
  ]);
  return rows[0]?.turn ?? -1;
}

describe("a committed write whose acknowledgement is lost", () => {
  it("a journal append is retried as written by its own turn, not refused as fenced", async () => {
    const a = await world.startRunner("A", { databaseUrl: proxy.url });
    const droppedBefore = proxy.dropped();
    proxy.loseReplyOnce("INSERT INTO journal_entries");
    const id = await world.start("fault.steps", { steps: 3 });
    const view = await world.waitForCompleted(id);
    expect(proxy.dropped() - droppedBefore).toBe(1);
    expect(view.output).toEqual({ pids: [a.pid, a.pid, a.pid] });
    // One turn did it all: the lost reply neither fenced the turn nor ran any step twice.
    expect(await turnOf(id)).toBe(1);
    expect(a.stdout()).not.toMatch(/turn fenced/);
    expect(await world.sideEffects(id)).toEqual({ s0: [a.pid], s1: [a.pid], s2: [a.pid] });
    await a.kill();
  });

  it("a signal consumption is retried as done, and the execution goes on with that signal", async () => {
    const b = await world.startRunner("B", { databaseUrl: proxy.url });
    const id = await world.start("fault.waits", { sleepMs: 1, signal: true });
    await world.waitForView(id, "waiting on signal go", (v) => waitsFor(v, "signal", "go"));
    const droppedBefore = proxy.dropped();
    proxy.loseReplyOnce("UPDATE signals SET consumed_at", "COMMIT");
    await world.client.signal(id, "go", { value: "once" });
    const view = await world.waitForView(id, "status completed", (v) => {
      if (!b.running()) throw new WaitAborted(`runner B died:\n${b.stderr()}`);
      return v.status === "completed";
    });
    expect(proxy.dropped() - droppedBefore).toBe(1);
    expect(view.output).toEqual({ value: "once" });
    expect(await turnOf(id)).toBe(2);
    expect(b.stdout()).not.toMatch(/turn fenced/);
    // The connection died inside the runner's transaction; the runner lives on.
    expect(b.running()).toBe(true);
    await b.kill();
  });

  it("a wait's resolution (a signal deadline passing) is retried as done by its own turn", async () => {
    const c = await world.startRunner("C", { databaseUrl: proxy.url });
    const droppedBefore = proxy.dropped();
    // The only single-statement resolution in this run: the signal wait timing out in turn 2.
    proxy.loseReplyOnce("UPDATE journal_entries j");
    const id = await world.start("fault.waits", { sleepMs: 1, signal: true, signalTimeoutMs: 1_000 });
    const view = await world.waitForCompleted(id);
    expect(proxy.dropped() - droppedBefore).toBe(1);
    expect(view.output).toEqual({ value: "timed-out" });
    expect(await turnOf(id)).toBe(2);
    expect(c.stdout()).not.toMatch(/turn fenced/);
    await c.kill();
  });
});
