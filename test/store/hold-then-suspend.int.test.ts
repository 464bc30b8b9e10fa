import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Fence } from "../../src/engine/execution-store.js";
import { PgExecutionStore } from "../../src/store/pg-execution-store.js";
import { heldExecutions } from "../../src/store/pg-sweep-queries.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

/**
 * `hold` means "held now" (docs/engine.md, "Non-determinism"): a starting runner wakes every
 * suspended execution with a hold at once (`heldExecutions`), because a new deployment may have
 * fixed its code. An execution that was held, then taken by a runner with the code, and then
 * suspended for recovery is no longer held: its hold must go, or every runner start wakes it
 * ahead of its recovery back-off and the projection shows a hold that is over.
 */

let db: TestDatabase;
let store: PgExecutionStore;

beforeAll(async () => {
  db = await createTestDatabase();
  store = new PgExecutionStore(db.pool);
});

afterAll(async () => {
  await db?.drop();
});

async function turn(id: string): Promise<Fence> {
  const started = await store.beginTurn(id);
  if (!started) throw new Error(`no turn for ${id}`);
  return started.fence;
}

async function row(id: string) {
  const { rows } = await db.pool.query<{ status: string; hold: unknown; wake_at: Date | null }>(
    "SELECT status::text, hold, wake_at FROM executions WHERE id = $1",
    [id],
  );
  return rows[0];
}

describe("a hold and a later suspension", () => {
  it("a suspension clears an earlier hold, so a starting runner does not wake it early", async () => {
    const { summary } = await store.createExecution({
      id: randomUUID(),
      workflow: "test.hold-then-suspend",
      workflowVersion: 1,
      orgId: "default",
      input: {},
      key: null,
      idempotencyKey: null,
      requestHash: null,
      parentId: null,
      parentPosition: null,
    });
    const id = summary.id;
    await store.hold(
      await turn(id),
      {
        code: "NON_DETERMINISM",
        message: "position 0 was step a, the code calls step b",
        retryable: false,
        details: {},
      },
      new Date(Date.now() + 60_000),
    );
    expect((await heldExecutions(db.pool, 100)).map((r) => r.id)).toContain(id);

    // A runner with the fixed code replays it; a step's transient retries run out: recovery.
    const recoverAt = new Date(Date.now() + 3_600_000);
    await store.suspend(await turn(id), { kind: "recovery", name: "pay" }, recoverAt, true);

    const after = await row(id);
    expect(after?.status).toBe("suspended");
    expect(after?.hold).toBeNull();
    expect(after?.wake_at?.getTime()).toBe(recoverAt.getTime());
    expect((await heldExecutions(db.pool, 100)).map((r) => r.id)).not.toContain(id);
  });
});
