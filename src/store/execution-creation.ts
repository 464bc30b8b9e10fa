import type { Pool } from "pg";
import { TurnFencedError } from "../engine/errors.js";
import type { ExecutionStatus, ExecutionSummary, Fence, NewExecution } from "../engine/execution-store.js";
import { SQL } from "./execution-sql.js";
import { json } from "./json-param.js";
import { type BatchOutcome, isolatingDataErrors } from "./tick-batcher.js";

/**
 * Creating executions in batches (docs/performance.md, "Where the time goes"): the starts, or the
 * children, that arrive in one turn of the event loop share one multi-row INSERT, and the few that
 * found an existing execution (an idempotency key, a child that exists) share one lookup. Every
 * caller gets its own answer, exactly what the single-row statements gave.
 */

/** One creation request; `traceparent` is taken at the call, inside the caller's trace context. */
export interface Creation {
  execution: NewExecution;
  traceparent: string | null;
  /** Set for a child: it is created only while the parent's turn holds. */
  fence?: Fence;
}

export type Created = { summary: ExecutionSummary; created: boolean };

/** Top-level starts: one release of expired idempotency keys when any is named, one insert. */
export async function createStarts(pool: Pool, items: readonly Creation[]): Promise<BatchOutcome<Created>[]> {
  const keyed = items.filter((c) => c.execution.idempotencyKey !== null);
  if (keyed.length > 0) {
    await pool.query(SQL.releaseExpiredIdempotencyKeys, [
      keyed.map((c) => c.execution.orgId),
      keyed.map((c) => c.execution.idempotencyKey),
    ]);
  }
  return isolatingDataErrors(items, async (batch) => {
    const { rows } = await pool.query({
      name: "tenor_insert_executions",
      text: SQL.insertExecutions,
      values: columnsOf(batch, startRow),
    });
    return answer(pool, batch, rows);
  });
}

/** Children of turns in progress: one fenced insert. */
export async function createChildren(
  pool: Pool,
  items: readonly Creation[],
): Promise<BatchOutcome<Created>[]> {
  return isolatingDataErrors(items, async (batch) => {
    const { rows } = await pool.query({
      name: "tenor_insert_child_executions",
      text: SQL.insertChildExecutions,
      values: columnsOf(batch, childRow),
    });
    return answer(pool, batch, rows);
  });
}

/** Matches inserted rows to their callers and looks up, in one statement, those that found one. */
async function answer(
  pool: Pool,
  batch: readonly Creation[],
  // biome-ignore lint/suspicious/noExplicitAny: pg rows, typed by the SQL that returns them.
  inserted: any[],
): Promise<BatchOutcome<Created>[]> {
  const byId = new Map(inserted.map((row) => [row.id as string, row]));
  const outcomes: (BatchOutcome<Created> | undefined)[] = batch.map((c) => {
    const row = byId.get(c.execution.id);
    // An id shared by two items of the batch: only the first one created it.
    if (!row) return undefined;
    byId.delete(c.execution.id);
    return { ok: true, value: { summary: toSummary(row), created: true } };
  });
  const missing = batch.flatMap((c, i) => (outcomes[i] ? [] : [{ creation: c, index: i }]));
  if (missing.length > 0) {
    const { rows } = await pool.query(SQL.findExistingMany, [
      missing.map((m) => m.creation.execution.id),
      missing.map((m) => m.creation.execution.orgId),
      missing.map((m) => m.creation.execution.idempotencyKey),
    ]);
    const found = new Map(rows.map((row) => [Number(row.ord), row]));
    missing.forEach(({ creation, index }, i) => {
      const row = found.get(i + 1);
      outcomes[index] = row
        ? { ok: true, value: { summary: toSummary(row), created: false } }
        : { ok: false, error: notCreated(creation) };
    });
  }
  return outcomes as BatchOutcome<Created>[];
}

function notCreated({ execution, fence }: Creation): Error {
  if (fence) return new TurnFencedError(fence.executionId, fence.turn, `child execution ${execution.id}`);
  return new Error(`execution ${execution.id} neither inserted nor found`);
}

function startRow({ execution: e, traceparent }: Creation): unknown[] {
  return [
    ...commonRow({ execution: e, traceparent }),
    e.createdBy ?? null,
    e.idempotencyExpiresAt ?? null,
    json(e.waitingFor ?? null),
    traceparent,
  ];
}

function childRow(creation: Creation): unknown[] {
  return [...commonRow(creation), creation.fence?.turn ?? null, creation.traceparent];
}

/** The columns both insert statements start with ($1..$10). */
function commonRow({ execution: e }: Creation): unknown[] {
  return [
    e.id,
    e.workflow,
    e.workflowVersion,
    e.orgId,
    e.key,
    e.idempotencyKey,
    e.requestHash,
    json(e.input),
    e.parentId,
    e.parentPosition,
  ];
}

/** Rows to the column arrays `unnest` takes. */
export function columnsOf<T>(batch: readonly T[], row: (item: T) => unknown[]): unknown[][] {
  const columns: unknown[][] = [];
  for (const item of batch) {
    for (const [i, value] of row(item).entries()) {
      const column = columns[i] ?? [];
      column.push(value);
      columns[i] = column;
    }
  }
  return columns;
}

// biome-ignore lint/suspicious/noExplicitAny: a pg row, typed by the SQL that returns it.
export function toSummary(row: any): ExecutionSummary {
  return {
    id: row.id,
    workflow: row.workflow,
    orgId: row.org_id,
    status: row.status as ExecutionStatus,
    output: row.output,
    failure: row.failure,
    requestHash: row.request_hash,
    parentId: row.parent_id,
  };
}
