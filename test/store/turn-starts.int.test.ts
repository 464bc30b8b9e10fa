import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TurnFencedError } from "../../src/engine/errors.js";
import type { Fence, JournalEntry } from "../../src/engine/execution-store.js";
import { PgExecutionStore } from "../../src/store/pg-execution-store.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { newExecution } from "../support/new-execution.js";

/**
 * Turns that begin in one tick (a fan-out's children) share one round trip of two statements
 * (docs/performance.md, "Where the time goes"), and each caller still gets exactly what a turn of
 * its own would: its own fence and journal, null for a terminal execution, the status the turn
 * found, and a later turn than a second processing of the same execution in the same tick.
 */

let db: TestDatabase;
let store: PgExecutionStore;
/** The simple-protocol strings (turn starts) sent through the store's pool since the last reset. */
let turnRoundTrips: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const original = db.pool.query.bind(db.pool) as (...args: unknown[]) => unknown;
  (db.pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    if (typeof args[0] === "string" && args[0].includes("SET turn = e.turn + 1"))
      turnRoundTrips.push(args[0]);
    return original(...args);
  };
  store = new PgExecutionStore(db.pool);
});

afterAll(async () => {
  await db?.drop();
});

function step(position: number, name: string): JournalEntry {
  return {
    position,
    kind: "step",
    name,
    state: "ok",
    result: name,
    error: null,
    attempts: 1,
    seq: position + 1,
    cause: position,
  };
}

async function created(): Promise<string> {
  const { summary } = await store.createExecution(newExecution({ workflow: "test.turn-starts" }));
  return summary.id;
}

describe("turns that begin in one tick", () => {
  it("share one round trip; each caller gets its own fence and journal, a terminal one null", async () => {
    const ids = [await created(), await created(), await created()];
    const [first, second, terminal] = ids as [string, string, string];
    const firstTurns = await Promise.all(ids.map((id) => store.beginTurn(id)));
    const fenceOf = (i: number) => (firstTurns[i] as { fence: Fence }).fence;
    await store.appendEntry(fenceOf(0), step(0, "a0"));
    await store.appendEntry(fenceOf(0), step(1, "a1"));
    await store.appendEntry(fenceOf(1), step(0, "b0"));
    await store.park(fenceOf(1), [{ kind: "signal", name: "go" }], null);
    await store.complete(fenceOf(2), { done: true });

    turnRoundTrips = [];
    const turns = await Promise.all(ids.map((id) => store.beginTurn(id)));
    expect(turnRoundTrips).toHaveLength(1);
    const [a, b, c] = turns;
    expect(a?.fence).toEqual({ executionId: first, turn: 2 });
    expect(a?.journal.map((e) => e.name)).toEqual(["a0", "a1"]);
    expect(b?.fence).toEqual({ executionId: second, turn: 2 });
    expect(b?.journal.map((e) => e.name)).toEqual(["b0"]);
    expect(c).toBeNull();
    // The first's last turn was still running (a crash, as far as the store knows); the second parked.
    expect(a?.afterCleanPark).toBe(false);
    expect(b?.afterCleanPark).toBe(true);
    const { rows } = await db.pool.query("SELECT status FROM executions WHERE id = $1", [terminal]);
    expect(rows[0].status).toBe("completed");
  });

  it("give two processings of one execution in the same tick two turns, the later one fencing the earlier", async () => {
    const id = await created();
    turnRoundTrips = [];
    const [earlier, later] = await Promise.all([store.beginTurn(id), store.beginTurn(id)]);
    expect(turnRoundTrips).toHaveLength(2);
    expect([earlier?.fence.turn, later?.fence.turn]).toEqual([1, 2]);
    await expect(store.appendEntry(earlier?.fence as Fence, step(0, "stale"))).rejects.toBeInstanceOf(
      TurnFencedError,
    );
    await store.appendEntry(later?.fence as Fence, step(0, "current"));
  });
});
