import type { Pool } from "pg";
import { json } from "./json-param.js";
import type { CancelActor } from "./pg-cancellation.js";
import { type ExecutionSelection, executionFilterClauses, iso } from "./pg-execution-reads.js";
import { withTransaction } from "./with-transaction.js";

/** What a bulk operation does to each run it matched. */
export const OPERATION_ACTIONS = [
  "cancel",
  "resume",
  "signal",
  "pause",
  "unpause",
  "reset-to-version",
] as const;
export type OperationAction = (typeof OPERATION_ACTIONS)[number];

export type OperationStatus = "running" | "completed" | "aborted";

/** A cancel's, a pause's or a reset's reason; a signal's name and payload. */
export interface OperationParams {
  reason?: string | null;
  signal?: { name: string; payload: unknown };
}

export interface OperationRecord {
  id: string;
  orgId: string;
  action: OperationAction;
  filter: ExecutionSelection;
  params: OperationParams;
  status: OperationStatus;
  total: number;
  succeeded: number;
  failed: number;
  createdBy: CancelActor;
  abortRequestedBy: CancelActor | null;
  abortRequestedAt: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

/** One run of an operation, pending or done. */
export interface OperationItem {
  executionId: string;
  /** Set when a pass took it up: a second pass on it is a retry after a crash. */
  attempted: boolean;
}

/** How one item ended: done, or refused with a stable code. */
export type ItemOutcome =
  | { executionId: string; outcome: "succeeded" }
  | { executionId: string; outcome: "failed"; code: string; message: string };

/** A run an operation acts on, as the pass reads it. */
export interface OperationTarget {
  id: string;
  workflow: string;
  version: number;
  status: string;
}

export interface OperationFailure {
  executionId: string;
  code: string;
  message: string;
  at: string;
}

const COLUMNS = `id, org_id, action, filter, params, status, total, succeeded, failed, created_by,
  abort_requested_by, abort_requested_at, created_at, updated_at, finished_at`;

/**
 * Bulk operations on PostgreSQL (`operations`, `operation_items`). An operation's items are the
 * runs its filter matched when it was created — a snapshot, so a run that starts matching later
 * is not acted on and the dry-run count is the number acted on. Every query names the organisation
 * where a caller reads or changes one.
 */
export class PgOperations {
  constructor(private readonly pool: Pool) {}

  /** How many of `orgId`'s runs `selection` matches now: the dry run. */
  async count(orgId: string, selection: ExecutionSelection): Promise<number> {
    const values: unknown[] = [orgId];
    const where = ["org_id = $1", ...executionFilterClauses(selection, values)];
    const { rows } = await this.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM executions WHERE ${where.join(" AND ")}`,
      values,
    );
    return rows[0]?.n ?? 0;
  }

  /**
   * Creates the operation and its items (the runs `selection` matches, at most `maxItems`) in one
   * transaction. Returns the new record, or the count when it matched more than `maxItems`.
   */
  async create(input: {
    id: string;
    orgId: string;
    action: OperationAction;
    filter: ExecutionSelection;
    params: OperationParams;
    createdBy: CancelActor;
    maxItems: number;
  }): Promise<{ kind: "created"; operation: OperationRecord } | { kind: "too-many"; matched: number }> {
    return withTransaction(this.pool, async (client) => {
      const values: unknown[] = [input.orgId];
      const where = ["org_id = $1", ...executionFilterClauses(input.filter, values)];
      const counted = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM executions WHERE ${where.join(" AND ")}`,
        values,
      );
      const matched = counted.rows[0]?.n ?? 0;
      if (matched > input.maxItems) return { kind: "too-many" as const, matched };
      await client.query(
        `INSERT INTO operations (id, org_id, action, filter, params, status, total, created_by)
         VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, 'running', 0, $6::jsonb)`,
        [input.id, input.orgId, input.action, json(input.filter), json(input.params), json(input.createdBy)],
      );
      values.push(input.id);
      const inserted = await client.query(
        `INSERT INTO operation_items (operation_id, execution_id)
         SELECT $${values.length}::uuid, id FROM executions WHERE ${where.join(" AND ")}`,
        values,
      );
      const total = inserted.rowCount ?? 0;
      // Nothing matched: done at once, with nothing to do.
      const { rows } = await client.query(
        `UPDATE operations SET total = $2,
           status = CASE WHEN $2 = 0 THEN 'completed' ELSE 'running' END,
           finished_at = CASE WHEN $2 = 0 THEN now() END
         WHERE id = $1 RETURNING ${COLUMNS}`,
        [input.id, total],
      );
      return { kind: "created" as const, operation: toOperation(rows[0]) };
    });
  }

  async get(orgId: string, id: string): Promise<OperationRecord | null> {
    const { rows } = await this.pool.query(
      `SELECT ${COLUMNS} FROM operations WHERE id = $1 AND org_id = $2`,
      [id, orgId],
    );
    return rows[0] ? toOperation(rows[0]) : null;
  }

  /** Newest first, after the cursor (createdAt, id) when given. */
  async list(
    orgId: string,
    limit: number,
    after?: { createdAt: string; id: string },
  ): Promise<OperationRecord[]> {
    const values: unknown[] = [orgId, limit];
    let page = "";
    if (after) {
      values.push(after.createdAt, after.id);
      page = "AND (created_at, id) < ($3::timestamptz, $4::uuid)";
    }
    const { rows } = await this.pool.query(
      `SELECT ${COLUMNS} FROM operations WHERE org_id = $1 ${page}
       ORDER BY created_at DESC, id DESC LIMIT $2`,
      values,
    );
    return rows.map(toOperation);
  }

  /** The items that failed, in execution-id order after `afterExecutionId`. */
  async failures(operationId: string, limit: number, afterExecutionId?: string): Promise<OperationFailure[]> {
    const { rows } = await this.pool.query(
      `SELECT execution_id, code, message, done_at FROM operation_items
       WHERE operation_id = $1 AND outcome = 'failed' AND ($3::uuid IS NULL OR execution_id > $3::uuid)
       ORDER BY execution_id LIMIT $2`,
      [operationId, limit, afterExecutionId ?? null],
    );
    return rows.map((r) => ({
      executionId: r.execution_id,
      code: r.code,
      message: r.message,
      at: iso(r.done_at) as string,
    }));
  }

  /**
   * Asks a running operation to stop: the pass in progress finishes its batch, then the operation
   * ends `aborted` with its remaining items untouched. Repeating keeps the first request. The
   * record as it is now, or null when `orgId` has no such operation.
   */
  async requestAbort(orgId: string, id: string, by: CancelActor): Promise<OperationRecord | null> {
    await this.pool.query(
      `UPDATE operations SET abort_requested_at = now(), abort_requested_by = $3::jsonb, updated_at = now()
       WHERE id = $1 AND org_id = $2 AND status = 'running' AND abort_requested_at IS NULL`,
      [id, orgId, json(by)],
    );
    return this.get(orgId, id);
  }

  /** The oldest running operation, for the runners' pass. */
  async nextRunning(): Promise<OperationRecord | null> {
    const { rows } = await this.pool.query(
      `SELECT ${COLUMNS} FROM operations WHERE status = 'running' ORDER BY created_at, id LIMIT 1`,
    );
    return rows[0] ? toOperation(rows[0]) : null;
  }

  /**
   * Up to `limit` pending items of the operation, marked attempted in the same statement: the mark
   * is committed before the action is applied, so an item found attempted was taken up by a pass
   * that did not live to record its outcome.
   */
  async takeBatch(operationId: string, limit: number): Promise<OperationItem[]> {
    const { rows } = await this.pool.query<{ execution_id: string; retried: boolean }>(
      `WITH batch AS (
         SELECT execution_id, attempted_at IS NOT NULL AS retried FROM operation_items
         WHERE operation_id = $1 AND outcome IS NULL ORDER BY execution_id LIMIT $2
       )
       UPDATE operation_items i SET attempted_at = COALESCE(i.attempted_at, now())
       FROM batch WHERE i.operation_id = $1 AND i.execution_id = batch.execution_id
       RETURNING i.execution_id, batch.retried`,
      [operationId, limit],
    );
    return rows
      .map((r) => ({ executionId: r.execution_id, attempted: r.retried }))
      .sort((a, b) => a.executionId.localeCompare(b.executionId));
  }

  /**
   * Records the outcomes of a batch and the operation's counts in one transaction, and ends the
   * operation when no item is pending. Outcomes already recorded are kept (a batch recorded twice
   * counts once).
   */
  async recordBatch(operationId: string, outcomes: readonly ItemOutcome[]): Promise<OperationRecord> {
    return withTransaction(this.pool, async (client) => {
      const recorded = await client.query<{ outcome: string }>(
        `UPDATE operation_items i SET outcome = o.outcome, code = o.code, message = o.message, done_at = now()
         FROM jsonb_to_recordset($2::jsonb) AS o(execution_id uuid, outcome text, code text, message text)
         WHERE i.operation_id = $1 AND i.execution_id = o.execution_id AND i.outcome IS NULL
         RETURNING i.outcome`,
        [
          operationId,
          json(
            outcomes.map((o) => ({
              execution_id: o.executionId,
              outcome: o.outcome,
              code: o.outcome === "failed" ? o.code : null,
              message: o.outcome === "failed" ? o.message : null,
            })),
          ),
        ],
      );
      const succeeded = recorded.rows.filter((r) => r.outcome === "succeeded").length;
      const failed = recorded.rows.length - succeeded;
      const { rows } = await client.query(
        `UPDATE operations SET succeeded = succeeded + $2, failed = failed + $3, updated_at = now(),
           status = CASE WHEN succeeded + $2 + failed + $3 >= total THEN 'completed' ELSE status END,
           finished_at = CASE WHEN succeeded + $2 + failed + $3 >= total THEN now() ELSE finished_at END
         WHERE id = $1 RETURNING ${COLUMNS}`,
        [operationId, succeeded, failed],
      );
      return toOperation(rows[0]);
    });
  }

  /** The runs of `orgId` among `ids` as a pass acts on them; a run gone (retention) is missing. */
  async targets(orgId: string, ids: readonly string[]): Promise<OperationTarget[]> {
    const { rows } = await this.pool.query<OperationTarget>(
      `SELECT id, workflow, workflow_version AS version, status::text AS status FROM executions
       WHERE org_id = $1 AND id = ANY($2::uuid[])`,
      [orgId, ids],
    );
    return rows;
  }

  /** Ends a running operation whose abort was asked for; its pending items stay pending, for the record. */
  async finishAborted(operationId: string): Promise<void> {
    await this.pool.query(
      `UPDATE operations SET status = 'aborted', finished_at = now(), updated_at = now()
       WHERE id = $1 AND status = 'running'`,
      [operationId],
    );
  }
}

// biome-ignore lint/suspicious/noExplicitAny: a pg row, typed by the SQL that returns it.
function toOperation(r: any): OperationRecord {
  return {
    id: r.id,
    orgId: r.org_id,
    action: r.action,
    filter: r.filter,
    params: r.params,
    status: r.status,
    total: r.total,
    succeeded: r.succeeded,
    failed: r.failed,
    createdBy: r.created_by,
    abortRequestedBy: r.abort_requested_by ?? null,
    abortRequestedAt: iso(r.abort_requested_at),
    createdAt: iso(r.created_at) as string,
    updatedAt: iso(r.updated_at) as string,
    finishedAt: iso(r.finished_at),
  };
}
