import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/observability/logger.js";
import { retentionCutoff, runRetentionPass } from "../../src/retention/retention-pass.js";
import { executionRetentionPolicy } from "../../src/store/retention/execution-retention.js";
import {
  keyedCommandRetentionPolicy,
  replicaRetentionPolicy,
} from "../../src/store/retention/housekeeping-retention.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

/**
 * Retention keeps what an unfinished execution may still need (docs/schedules.md, "Retention"):
 * an execution goes only when it and all its ancestors are terminal and past retention, or a
 * parent replaying after a long hold would re-create and re-run its child. Keyed commands and the
 * rows of crashed replicas expire too.
 */

let db: TestDatabase;
const logger = createLogger({ level: "error" });

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

/** An execution with `status`, finished (or last touched) `ageDays` ago, under `parentId`. */
async function execution(status: string, ageDays: number, parentId: string | null = null): Promise<string> {
  const id = randomUUID();
  await db.pool.query(
    `INSERT INTO executions (id, workflow, workflow_version, status, input, parent_id, created_at, updated_at, completed_at)
     VALUES ($1, 'lineage', 1, $2::"ExecutionStatus", '{}', $3, now() - make_interval(days => $4),
             now() - make_interval(days => $4),
             CASE WHEN $2 IN ('completed', 'failed') THEN now() - make_interval(days => $4) END)`,
    [id, status, parentId, ageDays],
  );
  return id;
}

async function exists(id: string): Promise<boolean> {
  const { rows } = await db.pool.query("SELECT 1 FROM executions WHERE id = $1", [id]);
  return rows.length === 1;
}

async function pass(policies = [executionRetentionPolicy(db.pool)]) {
  return runRetentionPass({ policies, cutoff: retentionCutoff(new Date(), 30), batchSize: 100, logger });
}

describe("retention and lineage", () => {
  it("keeps a terminal child while any ancestor is unfinished or inside the window", async () => {
    const waitingRoot = await execution("suspended", 60);
    const finishedMiddle = await execution("completed", 50, waitingRoot);
    const oldLeaf = await execution("completed", 50, finishedMiddle);
    const recentParent = await execution("completed", 3);
    const oldChildOfRecent = await execution("completed", 45, recentParent);
    const oldFamilyRoot = await execution("completed", 40);
    const oldFamilyChild = await execution("failed", 40, oldFamilyRoot);
    await pass();
    // The root is unfinished: its whole line stays, down to the grandchild.
    expect(await exists(finishedMiddle)).toBe(true);
    expect(await exists(oldLeaf)).toBe(true);
    // The parent is inside the window: its old child stays.
    expect(await exists(oldChildOfRecent)).toBe(true);
    // A whole line past retention goes.
    expect(await exists(oldFamilyRoot)).toBe(false);
    expect(await exists(oldFamilyChild)).toBe(false);
  });

  it("expires finished keyed commands and the rows of crashed replicas", async () => {
    await db.pool.query(
      `INSERT INTO keyed_commands (id, entity, command, command_id, key, request_hash, input, status, created_at, completed_at)
       VALUES (gen_random_uuid(), 'acct', 'debit', 'old-done', 'k', 'h', '{}', 'done', now() - interval '40 days', now() - interval '40 days'),
              (gen_random_uuid(), 'acct', 'debit', 'old-failed', 'k', 'h', '{}', 'failed', now() - interval '40 days', now() - interval '40 days'),
              (gen_random_uuid(), 'acct', 'debit', 'old-queued', 'k', 'h', '{}', 'queued', now() - interval '40 days', NULL),
              (gen_random_uuid(), 'acct', 'debit', 'new-done', 'k', 'h', '{}', 'done', now(), now())`,
    );
    await db.pool.query(
      `INSERT INTO replicas (id, domain, host, pid, started_at, last_seen)
       VALUES ('crashed', 'runner', 'h', 1, now() - interval '40 days', now() - interval '40 days'),
              ('alive', 'runner', 'h', 2, now() - interval '40 days', now())`,
    );
    const report = await pass([keyedCommandRetentionPolicy(db.pool), replicaRetentionPolicy(db.pool)]);
    expect(report.failures).toBe(0);
    const { rows: commands } = await db.pool.query<{ command_id: string }>(
      "SELECT command_id FROM keyed_commands ORDER BY command_id",
    );
    expect(commands.map((c) => c.command_id)).toEqual(["new-done", "old-queued"]);
    const { rows: replicas } = await db.pool.query<{ id: string }>("SELECT id FROM replicas");
    expect(replicas.map((r) => r.id)).toEqual(["alive"]);
  });
});
