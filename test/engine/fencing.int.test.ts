import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TurnFencedError } from "../../src/engine/errors.js";
import type { Fence, JournalEntry, NewExecution } from "../../src/engine/execution-store.js";
import { PgExecutionStore } from "../../src/store/pg-execution-store.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

/**
 * Fencing at the store (docs/engine.md, "Fencing"): once a newer turn was taken, every write
 * carrying the older turn is refused with TurnFencedError and changes nothing.
 */

let db: TestDatabase;
let store: PgExecutionStore;

beforeAll(async () => {
  db = await createTestDatabase();
  db.pool.on("error", () => undefined);
  store = new PgExecutionStore(db.pool);
});

afterAll(async () => {
  await db?.drop();
});

function newExecution(overrides: Partial<NewExecution> = {}): NewExecution {
  return {
    id: randomUUID(),
    workflow: "test.fencing",
    workflowVersion: 1,
    orgId: "default",
    input: {},
    key: null,
    idempotencyKey: null,
    requestHash: null,
    parentId: null,
    parentPosition: null,
    ...overrides,
  };
}

function entry(position: number, state: JournalEntry["state"] = "ok"): JournalEntry {
  return {
    position,
    kind: "step",
    name: `s${position}`,
    state,
    result: position,
    error: null,
    attempts: 1,
    seq: state === "pending" ? null : position + 1,
    cause: 0,
  };
}

async function row(id: string) {
  const { rows } = await db.pool.query(
    "SELECT status, turn, progress, output, failure, waiting_for, hold FROM executions WHERE id = $1",
    [id],
  );
  return rows[0];
}

async function journalOf(id: string) {
  const { rows } = await db.pool.query(
    "SELECT position, state, result, turn FROM journal_entries WHERE execution_id = $1 ORDER BY position",
    [id],
  );
  return rows;
}

/** Creates an execution, takes turn 1 (writes a pending signal wait at 0), then turn 2. */
async function twoTurns(): Promise<{ id: string; stale: Fence; current: Fence }> {
  const { summary } = await store.createExecution(newExecution());
  const first = await store.beginTurn(summary.id);
  if (!first) throw new Error("no first turn");
  await store.appendEntry(first.fence, { ...entry(0, "pending"), kind: "signal", name: "go", result: null });
  const second = await store.beginTurn(summary.id);
  if (!second) throw new Error("no second turn");
  expect(second.fence.turn).toBe(first.fence.turn + 1);
  expect(second.journal).toHaveLength(1);
  return { id: summary.id, stale: first.fence, current: second.fence };
}

describe("fencing", () => {
  it("refuses every write of a stale turn and writes nothing", async () => {
    const { id, stale } = await twoTurns();
    const before = await row(id);
    await db.pool.query("INSERT INTO signals (execution_id, name, payload) VALUES ($1, 'go', '{}')", [id]);

    const refused: (() => Promise<unknown>)[] = [
      () => store.appendEntry(stale, entry(1)),
      () => store.resolveEntry(stale, 0, 1, "ok", { timedOut: true }, null),
      () => store.consumeSignal(stale, 0, "go", 1),
      () => store.numberDelivery(stale, 0, 1),
      () => store.setProgress(stale, { phase: "stale" }),
      () => store.park(stale, [{ kind: "timer", name: "t" }], new Date()),
      () => store.suspend(stale, { kind: "recovery", name: "s" }, new Date(), true),
      () =>
        store.hold(
          stale,
          { code: "NON_DETERMINISM", message: "m", retryable: false, details: {} },
          new Date(),
        ),
      () => store.fail(stale, { code: "X", message: "m", retryable: false, details: {} }),
      () => store.complete(stale, { done: true }),
      () => store.createExecution(newExecution({ parentId: id, parentPosition: 1 }), stale),
    ];
    for (const write of refused) await expect(write()).rejects.toBeInstanceOf(TurnFencedError);

    expect(await row(id)).toEqual(before);
    expect(await journalOf(id)).toEqual([{ position: 0, state: "pending", result: null, turn: stale.turn }]);
    const signals = await db.pool.query("SELECT consumed_at FROM signals WHERE execution_id = $1", [id]);
    expect(signals.rows).toEqual([{ consumed_at: null }]);
    const children = await db.pool.query("SELECT 1 FROM executions WHERE parent_id = $1", [id]);
    expect(children.rows).toHaveLength(0);
  });

  it("accepts the same writes from the current turn", async () => {
    const { id, current } = await twoTurns();
    await db.pool.query("INSERT INTO signals (execution_id, name, payload) VALUES ($1, 'go', '{\"n\":1}')", [
      id,
    ]);
    expect(await store.consumeSignal(current, 0, "go", 1)).toEqual({ payload: { n: 1 } });
    await store.appendEntry(current, entry(1));
    await store.setProgress(current, { phase: "current" });
    await store.complete(current, { done: true });
    expect(await row(id)).toMatchObject({
      status: "completed",
      output: { done: true },
      progress: { phase: "current" },
    });
    expect((await journalOf(id)).map((e) => [e.position, e.state, e.turn])).toEqual([
      [0, "ok", current.turn],
      [1, "ok", current.turn],
    ]);
    // A terminal execution takes no further turn.
    expect(await store.beginTurn(id)).toBeNull();
  });

  it("refuses a stale append batched together with a current one, writing only the current row", async () => {
    const a = await twoTurns();
    const b = await twoTurns();
    const results = await Promise.allSettled([
      store.appendEntry(a.stale, entry(1)),
      store.appendEntry(b.current, entry(1)),
    ]);
    expect(results[0]).toMatchObject({ status: "rejected", reason: expect.any(TurnFencedError) });
    expect(results[1]).toEqual({ status: "fulfilled", value: undefined });
    expect(await journalOf(a.id)).toHaveLength(1);
    expect(await journalOf(b.id)).toHaveLength(2);
  });

  /**
   * The takeover race: a stale turn's fenced write holds the execution row FOR SHARE while the new
   * turn's increment waits for it. Everything that write commits must be in the journal the new
   * turn replays; reading the journal in the increment's own statement saw the snapshot from
   * before the wait and missed it (a step journaled by the stale runner ran again; a signal it
   * consumed left the new turn parked on a signal that no longer existed).
   */
  it("a turn taken while a stale turn's write was in flight replays that write", async () => {
    const { summary } = await store.createExecution(newExecution());
    const stale = await store.beginTurn(summary.id);
    if (!stale) throw new Error("no first turn");
    await store.appendEntry(stale.fence, entry(0));

    const staleWriter = await db.pool.connect();
    try {
      await staleWriter.query("BEGIN");
      // What SQL.appendEntry and consumeSignal do: lock the execution row with the stale turn...
      await staleWriter.query("SELECT 1 FROM executions WHERE id = $1 AND turn = $2 FOR SHARE", [
        summary.id,
        stale.fence.turn,
      ]);
      await staleWriter.query(
        `INSERT INTO journal_entries (execution_id, position, kind, name, state, result, turn, seq, cause)
         VALUES ($1, 1, 'step', 's1', 'ok', '1', $2, 2, 1)`,
        [summary.id, stale.fence.turn],
      );
      // ...while the next turn is being taken: its increment waits for that lock.
      const next = store.beginTurn(summary.id);
      await waitForLockWait(summary.id);
      await staleWriter.query("COMMIT");
      const taken = await next;
      expect(taken?.fence.turn).toBe(stale.fence.turn + 1);
      expect(taken?.journal.map((e) => [e.position, e.name, e.seq])).toEqual([
        [0, "s0", 1],
        [1, "s1", 2],
      ]);
    } finally {
      staleWriter.release();
    }
  });
});

/** Waits until some backend waits for a row lock (the turn increment blocked behind the stale write). */
async function waitForLockWait(executionId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await db.pool.query(
      `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE executions e SET turn%'
         AND datname = current_database()`,
    );
    if (rows.length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the turn increment of ${executionId} never waited for the stale write's lock`);
}
