import type { Pool } from "pg";
import type { ExecutionView } from "../engine/execution-client.js";
import type { ExecutionStatus } from "../engine/execution-store.js";
import type { CancelActor } from "./pg-cancellation.js";
import type { KeyPause } from "./pg-pause.js";
import { readResets } from "./pg-reset.js";

/** The status projection of one execution as the Platform API reads it, always within one organisation. */
export interface ExecutionRecord extends ExecutionView {
  key: string | null;
  idempotencyKey: string | null;
  idempotencyExpiresAt: string | null;
  createdBy: string | null;
  cancelRequestedAt: string | null;
  /** The API key that asked for the cancellation, as it was then. */
  cancelRequestedBy: CancelActor | null;
  cancelReason: string | null;
  /** Set while an operator has the run paused (docs/engine.md, "Pause"). */
  paused: KeyPause | null;
}

/**
 * A status a list may filter by: one of the five, or `held`, which is not a sixth status but the
 * suspended executions that carry a hold (non-determinism, a workflow version no runner has), as
 * the metrics count them (pg-metrics-queries.ts).
 */
export type ListStatus = ExecutionStatus | "held";

export interface ExecutionListFilter extends Omit<ExecutionSelection, "version"> {
  orgId: string;
  idempotencyKey?: string;
  /** Only the children of this execution. */
  parentId?: string;
  /** Only executions without a parent (no workflow started them). */
  topLevel?: boolean;
  /** Page after this (createdAt, id): newest first. */
  after?: { createdAt: string; id: string };
  limit: number;
}

export const EXECUTION_COLUMNS = `id, workflow, workflow_version, org_id, key, idempotency_key, idempotency_expires_at, status,
  waiting_for, wake_at, progress, output, failure, hold, recovery_attempts, parent_id, created_by,
  cancel_requested_at, cancel_requested_by, cancel_reason, paused, created_at, updated_at, completed_at`;

/** A failed execution's code, or a held one's: what `code=` filters on. */
const FAILURE_CODE = "COALESCE(failure ->> 'code', hold ->> 'code')";

/** Held: suspended with a hold; the predicate of the partial index on held executions (its migration). */
const HELD = "(hold IS NOT NULL AND status = 'suspended')";

/** `status = ANY(...)` for the five statuses, OR'd with {@link HELD} when `held` is asked for. */
function statusClause(statuses: readonly ListStatus[], values: unknown[]): string {
  const plain = statuses.filter((s) => s !== "held");
  const parts: string[] = [];
  if (plain.length > 0) {
    values.push(plain);
    parts.push(`status::text = ANY($${values.length}::text[])`);
  }
  if (plain.length < statuses.length) parts.push(HELD);
  return parts.length === 1 ? (parts[0] as string) : `(${parts.join(" OR ")})`;
}

/** What selects executions by their own fields: the list's filters, and a bulk operation's. */
export interface ExecutionSelection {
  workflow?: string;
  /** The workflow version the execution runs on. */
  version?: number;
  /** Any of these (OR); `held` is `suspended` with a hold. */
  status?: ListStatus[];
  /** The failure's stable code, or a held execution's hold code. */
  code?: string;
  /** The keyed-serialization key. */
  key?: string;
  createdAfter?: string;
  createdBefore?: string;
}

/**
 * The WHERE clauses (ANDed) of `selection`, their values appended to `values` (placeholders
 * numbered after what is already there). The code clause keeps the expression and predicate of
 * the partial index on failure codes (its migration).
 */
export function executionFilterClauses(selection: ExecutionSelection, values: unknown[]): string[] {
  const where: string[] = [];
  const add = (clause: (p: string) => string, value: unknown) => {
    values.push(value);
    where.push(clause(`$${values.length}`));
  };
  if (selection.workflow !== undefined) add((p) => `workflow = ${p}`, selection.workflow);
  if (selection.version !== undefined) add((p) => `workflow_version = ${p}::int`, selection.version);
  if (selection.status !== undefined) where.push(statusClause(selection.status, values));
  if (selection.code !== undefined)
    add((p) => `(failure IS NOT NULL OR hold IS NOT NULL) AND ${FAILURE_CODE} = ${p}`, selection.code);
  if (selection.key !== undefined) add((p) => `key = ${p}`, selection.key);
  if (selection.createdAfter !== undefined)
    add((p) => `created_at >= ${p}::timestamptz`, selection.createdAfter);
  if (selection.createdBefore !== undefined)
    add((p) => `created_at < ${p}::timestamptz`, selection.createdBefore);
  return where;
}

/** The WHERE clauses and their values of a list's filter (not its page). */
function selection(filter: Omit<ExecutionListFilter, "after" | "limit">): {
  where: string[];
  values: unknown[];
} {
  const values: unknown[] = [filter.orgId];
  const where = ["org_id = $1", ...executionFilterClauses(filter, values)];
  const add = (clause: (p: string) => string, value: unknown) => {
    values.push(value);
    where.push(clause(`$${values.length}`));
  };
  if (filter.idempotencyKey !== undefined) add((p) => `idempotency_key = ${p}`, filter.idempotencyKey);
  if (filter.parentId !== undefined) add((p) => `parent_id = ${p}::uuid`, filter.parentId);
  if (filter.topLevel === true) where.push("parent_id IS NULL");
  return { where, values };
}

/** Reads of executions for the Platform API. Every query names the organisation: no read crosses tenants. */
export class PgExecutionReads {
  constructor(private readonly pool: Pool) {}

  async get(orgId: string, executionId: string): Promise<ExecutionRecord | null> {
    const { rows } = await this.pool.query(
      `SELECT ${EXECUTION_COLUMNS} FROM executions WHERE id = $1 AND org_id = $2`,
      [executionId, orgId],
    );
    return rows[0] ? toExecutionRecord(rows[0]) : null;
  }

  /** See {@link readResets}. */
  resets(orgId: string, executionId: string) {
    return readResets(this.pool, orgId, executionId);
  }

  /** The input the execution started with (as stored: encoded), or undefined when there is no such execution. */
  async input(orgId: string, executionId: string): Promise<{ input: unknown } | undefined> {
    const { rows } = await this.pool.query<{ input: unknown }>(
      "SELECT input FROM executions WHERE id = $1 AND org_id = $2",
      [executionId, orgId],
    );
    return rows[0];
  }

  /** Newest first; `limit` rows at most. */
  async list(filter: ExecutionListFilter): Promise<ExecutionRecord[]> {
    const { where, values } = selection(filter);
    if (filter.after !== undefined) {
      values.push(filter.after.createdAt, filter.after.id);
      where.push(`(created_at, id) < ($${values.length - 1}::timestamptz, $${values.length}::uuid)`);
    }
    values.push(filter.limit);
    const { rows } = await this.pool.query(
      `SELECT ${EXECUTION_COLUMNS} FROM executions WHERE ${where.join(" AND ")}
       ORDER BY created_at DESC, id DESC LIMIT $${values.length}`,
      values,
    );
    return rows.map(toExecutionRecord);
  }

  /**
   * How many executions the filter selects, per status, over every page (`after` and `limit` are
   * not read): the counts beside a list that are true of that list.
   */
  async countByStatus(
    filter: Omit<ExecutionListFilter, "after" | "limit">,
  ): Promise<Partial<Record<ExecutionStatus, number>>> {
    const { where, values } = selection(filter);
    const { rows } = await this.pool.query<{ status: ExecutionStatus; n: number }>(
      `SELECT status::text AS status, count(*)::int AS n FROM executions
       WHERE ${where.join(" AND ")} GROUP BY status`,
      values,
    );
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  }

  /** The signal stored under this idempotency key, to tell a replay from a reuse with another payload. */
  async findSignal(
    executionId: string,
    idempotencyKey: string,
  ): Promise<{ name: string; payload: unknown } | null> {
    const { rows } = await this.pool.query(
      "SELECT name, payload FROM signals WHERE execution_id = $1 AND idempotency_key = $2",
      [executionId, idempotencyKey],
    );
    return rows[0] ? { name: rows[0].name, payload: rows[0].payload } : null;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: a pg row, typed by the SQL that returns it.
export function toExecutionRecord(r: any): ExecutionRecord {
  return {
    id: r.id,
    workflow: r.workflow,
    workflowVersion: r.workflow_version,
    orgId: r.org_id,
    key: r.key,
    idempotencyKey: r.idempotency_key,
    idempotencyExpiresAt: iso(r.idempotency_expires_at),
    status: r.status,
    waitingFor: r.waiting_for,
    wakeAt: iso(r.wake_at),
    progress: r.progress,
    output: r.output,
    failure: r.failure,
    hold: r.hold,
    recoveryAttempts: r.recovery_attempts,
    parentId: r.parent_id,
    createdBy: r.created_by,
    cancelRequestedAt: iso(r.cancel_requested_at),
    cancelRequestedBy: r.cancel_requested_by ?? null,
    cancelReason: r.cancel_reason ?? null,
    paused: r.paused ?? null,
    createdAt: iso(r.created_at) as string,
    updatedAt: iso(r.updated_at) as string,
    completedAt: iso(r.completed_at),
  };
}

export function iso(value: Date | null): string | null {
  return value ? value.toISOString() : null;
}
