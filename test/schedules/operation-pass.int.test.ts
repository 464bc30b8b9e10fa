import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { createLogger } from "../../src/observability/logger.js";
import { ExecutionQueue } from "../../src/runtime/execution-queue.js";
import { runOperationPass } from "../../src/schedules/operation-pass.js";
import { PgExecutionCommands } from "../../src/store/pg-execution-commands.js";
import { PgExecutionQueries } from "../../src/store/pg-execution-queries.js";
import { type OperationAction, type OperationParams, PgOperations } from "../../src/store/pg-operations.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";

/**
 * The runners' bulk-operation pass against real PostgreSQL and Redis: a snapshot of the matched
 * runs, bounded batches, per-run refusals with codes, a batch interrupted by a crash applied again
 * without a second effect, and 10,000 runs.
 */
let db: TestDatabase;
let redis: Redis;
let queue: ExecutionQueue;
let operations: PgOperations;
const prefix = testRedisPrefix(import.meta.url);
const logger = createLogger({ level: "error" });
const ORG = "ops-org";
const ACTOR = { keyId: randomUUID(), name: "ops key", subject: "ops@example.test", role: "operator" };

const approvalFixture = defineWorkflow({
  name: "bulk.fixture",
  version: 1,
  input: z.object({}),
  output: z.object({}),
  signals: { go: z.object({ value: z.number().int() }) },
  async run() {
    return {};
  },
});
const workflows = new WorkflowRegistry([approvalFixture]);

beforeAll(async () => {
  db = await createTestDatabase();
  redis = new Redis(redisUrl(), { maxRetriesPerRequest: null });
  queue = new ExecutionQueue(redis, prefix, logger);
  operations = new PgOperations(db.pool);
});

afterAll(async () => {
  await queue?.close();
  await deleteRedisPrefix(prefix, redis);
  redis?.disconnect();
  await db?.drop();
});

/** `count` runs of `workflow` in `status`, of ORG unless told; their ids. */
async function seed(
  count: number,
  status: string,
  options: { workflow?: string; org?: string } = {},
): Promise<string[]> {
  const { rows } = await db.pool.query<{ id: string }>(
    `INSERT INTO executions (id, workflow, workflow_version, org_id, status, input, created_at, updated_at, completed_at)
     SELECT gen_random_uuid(), $1, 1, $2, $3::"ExecutionStatus", '{}', now(), now(),
            CASE WHEN $3 IN ('completed', 'failed') THEN now() END
       FROM generate_series(1, $4)
     RETURNING id`,
    [options.workflow ?? "bulk.fixture", options.org ?? ORG, status, count],
  );
  return rows.map((r) => r.id);
}

async function create(
  action: OperationAction,
  filter: Record<string, unknown>,
  params: OperationParams = {},
) {
  const created = await operations.create({
    id: randomUUID(),
    orgId: ORG,
    action,
    filter,
    params,
    createdBy: ACTOR,
    maxItems: 20_000,
  });
  if (created.kind !== "created") throw new Error(`refused: ${created.matched} matched`);
  return created.operation;
}

function stores() {
  return {
    operations,
    commands: new PgExecutionCommands(db.pool),
    signals: new PgExecutionQueries(db.pool),
  };
}

/** Runs passes until the operation ends; the number of passes. */
async function runToEnd(operationId: string, batchSize: number): Promise<number> {
  for (let passes = 1; passes <= 1_000; passes++) {
    await runOperationPass({ ...stores(), queue, workflows, logger, batchSize, budgetMs: 60_000 });
    const now = await operations.get(ORG, operationId);
    if (now?.status !== "running") return passes;
  }
  throw new Error(`operation ${operationId} did not end`);
}

async function signalsOf(ids: readonly string[], key: string) {
  const { rows } = await db.pool.query<{
    execution_id: string;
    n: number;
    payload: unknown;
    sent_by: unknown;
  }>(
    `SELECT execution_id, count(*)::int AS n, min(payload::text)::jsonb AS payload, min(sent_by::text)::jsonb AS sent_by
     FROM signals WHERE execution_id = ANY($1::uuid[]) AND idempotency_key = $2 GROUP BY execution_id`,
    [ids, key],
  );
  return rows;
}

describe("bulk operation pass", () => {
  it("signals 10,000 runs once each, in bounded batches, and refuses the finished and the invalid with codes", async () => {
    const waiting = await seed(10_000, "waiting", { workflow: "bulk.scale" });
    const done = await seed(3, "completed", { workflow: "bulk.scale" });
    await seed(5, "waiting", { workflow: "bulk.scale", org: "another-org" });
    expect(await operations.count(ORG, { workflow: "bulk.scale" })).toBe(10_003);

    const operation = await create(
      "signal",
      { workflow: "bulk.scale" },
      { signal: { name: "go", payload: { value: 1 } } },
    );
    expect(operation).toMatchObject({ status: "running", total: 10_003, succeeded: 0, failed: 0 });
    // A run that starts matching after creation is not the operation's.
    const late = await seed(1, "waiting", { workflow: "bulk.scale" });

    await runToEnd(operation.id, 1_000);
    const ended = await operations.get(ORG, operation.id);
    expect(ended).toMatchObject({ status: "completed", total: 10_003, succeeded: 10_000, failed: 3 });
    expect(ended?.finishedAt).not.toBeNull();

    const signals = await signalsOf([...waiting, ...done, ...late], `operation:${operation.id}`);
    expect(signals).toHaveLength(10_000);
    expect(signals.every((s) => s.n === 1)).toBe(true);
    expect(new Set(signals.map((s) => s.execution_id))).toEqual(new Set(waiting));
    expect(signals[0]?.payload).toEqual({ value: 1 });
    expect(signals[0]?.sent_by).toEqual(ACTOR);

    const failures = await operations.failures(operation.id, 10);
    expect(failures.map((f) => f.executionId).sort()).toEqual([...done].sort());
    expect(failures.every((f) => f.code === "EXECUTION_TERMINAL" && /completed/.test(f.message))).toBe(true);

    // Each waiting run was woken: its job is in the executions queue.
    expect(await queue.queue.getJobCountByTypes("wait", "prioritized", "delayed")).toBeGreaterThanOrEqual(
      10_000,
    );
  }, 240_000);

  it("refuses a payload the workflow's schema rejects, per run, naming the field", async () => {
    const ids = await seed(4, "waiting");
    const operation = await create(
      "signal",
      { workflow: "bulk.fixture", status: ["waiting"] },
      { signal: { name: "go", payload: { value: "one" } } },
    );
    await runToEnd(operation.id, 2);
    expect(await operations.get(ORG, operation.id)).toMatchObject({
      status: "completed",
      succeeded: 0,
      failed: 4,
    });
    const failures = await operations.failures(operation.id, 10);
    expect(failures.map((f) => f.executionId).sort()).toEqual([...ids].sort());
    expect(failures[0]).toMatchObject({ code: "SIGNAL_INVALID" });
    expect(failures[0]?.message).toMatch(/value/);
    expect(await signalsOf(ids, `operation:${operation.id}`)).toEqual([]);
  });

  it("applies a batch cut short by a crash again, without a second effect", async () => {
    const ids = await seed(6, "suspended", { workflow: "bulk.crash" });
    const cancel = await create("cancel", { workflow: "bulk.crash" }, { reason: "migrating" });
    // A pass takes up three runs and dies before it records them: two got cancelled, one not.
    const taken = await operations.takeBatch(cancel.id, 3);
    expect(taken.every((i) => !i.attempted)).toBe(true);
    await db.pool.query(
      `UPDATE executions SET cancel_requested_at = now(), cancel_requested_by = $2::jsonb, cancel_reason = 'migrating'
       WHERE id = ANY($1::uuid[])`,
      [taken.slice(0, 2).map((i) => i.executionId), JSON.stringify(ACTOR)],
    );
    const again = await operations.takeBatch(cancel.id, 3);
    expect(again.map((i) => i.attempted)).toEqual([true, true, true]);
    await runToEnd(cancel.id, 3);
    expect(await operations.get(ORG, cancel.id)).toMatchObject({
      status: "completed",
      succeeded: 6,
      failed: 0,
    });
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM executions WHERE id = ANY($1::uuid[])
         AND cancel_requested_at IS NOT NULL AND cancel_reason = 'migrating' AND cancel_requested_by = $2::jsonb`,
      [ids, JSON.stringify(ACTOR)],
    );
    expect(rows[0]?.n).toBe(6);

    // A resume retried on a run the interrupted pass already resumed counts it done; a first
    // attempt on a run that is not suspended is refused with its status.
    const [resumed, notSuspended] = await seed(2, "waiting", { workflow: "bulk.resume" });
    const resume = await create("resume", { workflow: "bulk.resume" });
    const first = await operations.takeBatch(resume.id, 1);
    expect(first[0]?.executionId).toBe([resumed, notSuspended].sort()[0]);
    await runToEnd(resume.id, 5);
    const outcome = await operations.get(ORG, resume.id);
    expect(outcome).toMatchObject({ status: "completed", succeeded: 1, failed: 1 });
    const failures = await operations.failures(resume.id, 10);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ code: "EXECUTION_NOT_SUSPENDED" });
    expect(failures[0]?.executionId).toBe([resumed, notSuspended].sort()[1]);
  });

  it("pauses the runs it matches (keeping a pause already there) and unpauses them, refusing the finished and the not paused with codes", async () => {
    const waiting = await seed(4, "waiting", { workflow: "bulk.pause" });
    const [done] = await seed(1, "completed", { workflow: "bulk.pause" });
    const earlier = {
      at: "2026-12-01T00:00:00.000Z",
      by: { ...ACTOR, subject: "first@example.test" },
      reason: "first",
    };
    await db.pool.query("UPDATE executions SET paused = $2::jsonb WHERE id = $1", [
      waiting[0],
      JSON.stringify(earlier),
    ]);
    const pause = await create("pause", { workflow: "bulk.pause" }, { reason: "quarter end" });
    await runToEnd(pause.id, 2);
    expect(await operations.get(ORG, pause.id)).toMatchObject({
      status: "completed",
      succeeded: 4,
      failed: 1,
    });
    expect(await operations.failures(pause.id, 10)).toMatchObject([
      { executionId: done, code: "EXECUTION_TERMINAL" },
    ]);
    const { rows } = await db.pool.query<{ id: string; paused: { by: { subject: string }; reason: string } }>(
      "SELECT id, paused FROM executions WHERE id = ANY($1::uuid[]) ORDER BY id",
      [waiting],
    );
    for (const row of rows) {
      const expected = row.id === waiting[0] ? earlier : { by: ACTOR, reason: "quarter end" };
      expect(row.paused).toMatchObject(expected);
    }

    // One run was unpaused by hand meanwhile: a first attempt on it is refused EXECUTION_NOT_PAUSED.
    await db.pool.query("UPDATE executions SET paused = NULL WHERE id = $1", [waiting[1]]);
    const unpause = await create("unpause", { workflow: "bulk.pause", status: ["waiting"] });
    await runToEnd(unpause.id, 3);
    expect(await operations.get(ORG, unpause.id)).toMatchObject({
      status: "completed",
      succeeded: 3,
      failed: 1,
    });
    expect(await operations.failures(unpause.id, 10)).toMatchObject([
      { executionId: waiting[1], code: "EXECUTION_NOT_PAUSED" },
    ]);
    const still = await db.pool.query(
      "SELECT count(*)::int AS n FROM executions WHERE id = ANY($1::uuid[]) AND paused IS NOT NULL",
      [waiting],
    );
    expect(still.rows[0]?.n).toBe(0);
  });

  it("ends an aborted operation with its remaining runs untouched", async () => {
    const ids = await seed(10, "waiting", { workflow: "bulk.abort" });
    const operation = await create("cancel", { workflow: "bulk.abort" });
    const aborted = await operations.requestAbort(ORG, operation.id, ACTOR);
    expect(aborted?.abortRequestedBy).toEqual(ACTOR);
    // Asking again keeps the first request.
    await operations.requestAbort(ORG, operation.id, { ...ACTOR, subject: "someone-else" });
    await runToEnd(operation.id, 4);
    const ended = await operations.get(ORG, operation.id);
    expect(ended).toMatchObject({ status: "aborted", succeeded: 0, failed: 0, total: 10 });
    expect(ended?.abortRequestedBy).toEqual(ACTOR);
    const { rows } = await db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM executions WHERE id = ANY($1::uuid[]) AND cancel_requested_at IS NOT NULL",
      [ids],
    );
    expect(rows[0]?.n).toBe(0);
  });

  it("refuses a filter that matches more than the bound, with the count, and creates nothing", async () => {
    await seed(7, "waiting", { workflow: "bulk.bound" });
    const refused = await operations.create({
      id: randomUUID(),
      orgId: ORG,
      action: "cancel",
      filter: { workflow: "bulk.bound" },
      params: {},
      createdBy: ACTOR,
      maxItems: 6,
    });
    expect(refused).toEqual({ kind: "too-many", matched: 7 });
    const { rows } = await db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM operations WHERE filter->>'workflow' = 'bulk.bound'",
    );
    expect(rows[0]?.n).toBe(0);
  });
});
