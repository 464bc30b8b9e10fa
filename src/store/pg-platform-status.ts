import type { Pool } from "pg";
import type { ExecutionStatus, WaitDescriptor } from "../engine/execution-store.js";
import { iso } from "./pg-execution-reads.js";

const NOT_TERMINAL = "status IN ('running', 'waiting', 'suspended')";

export interface WorkflowHealthRow {
  workflow: string;
  counts: Partial<Record<ExecutionStatus, number>>;
  oldestPending: { id: string; status: ExecutionStatus; createdAt: string } | null;
  noMutation: number;
}

export interface StaleExecutionRow {
  id: string;
  workflow: string;
  status: ExecutionStatus;
  updatedAt: string;
  waitingFor: WaitDescriptor[] | null;
}

/**
 * Platform Status of one organisation, derived from the status projections only (README, "Routes"):
 * counts per workflow and status, the oldest unfinished execution per workflow, and unfinished
 * executions whose projection has not changed for `noMutationSeconds`.
 */
export async function readPlatformStatus(
  pool: Pool,
  /** Null: every organisation (the platform keys' view). */
  orgId: string | null,
  noMutationSeconds: number,
  staleLimit: number,
): Promise<{ workflows: WorkflowHealthRow[]; stale: StaleExecutionRow[] }> {
  const [counts, oldest, stale] = await Promise.all([
    pool.query(
      `SELECT workflow, status::text AS status, count(*)::int AS n,
              (count(*) FILTER (WHERE ${NOT_TERMINAL} AND updated_at < now() - make_interval(secs => $2::float)))::int AS stale
       FROM executions WHERE ($1::text IS NULL OR org_id = $1) GROUP BY workflow, status`,
      [orgId, noMutationSeconds],
    ),
    pool.query(
      `SELECT DISTINCT ON (workflow) workflow, id, status::text AS status, created_at FROM executions
       WHERE ($1::text IS NULL OR org_id = $1) AND ${NOT_TERMINAL} ORDER BY workflow, created_at, id`,
      [orgId],
    ),
    pool.query(
      `SELECT id, workflow, status::text AS status, updated_at, waiting_for FROM executions
       WHERE ($1::text IS NULL OR org_id = $1) AND ${NOT_TERMINAL} AND updated_at < now() - make_interval(secs => $2::float)
       ORDER BY updated_at, id LIMIT $3`,
      [orgId, noMutationSeconds, staleLimit],
    ),
  ]);
  const byWorkflow = new Map<string, WorkflowHealthRow>();
  const entry = (workflow: string) => {
    let row = byWorkflow.get(workflow);
    if (!row) {
      row = { workflow, counts: {}, oldestPending: null, noMutation: 0 };
      byWorkflow.set(workflow, row);
    }
    return row;
  };
  for (const r of counts.rows) {
    const row = entry(r.workflow);
    row.counts[r.status as ExecutionStatus] = r.n;
    row.noMutation += r.stale;
  }
  for (const r of oldest.rows) {
    entry(r.workflow).oldestPending = { id: r.id, status: r.status, createdAt: iso(r.created_at) as string };
  }
  return {
    workflows: [...byWorkflow.values()].sort((a, b) => a.workflow.localeCompare(b.workflow)),
    stale: stale.rows.map((r) => ({
      id: r.id,
      workflow: r.workflow,
      status: r.status,
      updatedAt: iso(r.updated_at) as string,
      waitingFor: r.waiting_for,
    })),
  };
}

/** The Platform Status reads over one pool (the api's), for the routes and the console. */
export class PgPlatformStatus {
  constructor(private readonly pool: Pool) {}

  /** See {@link readPlatformStatus}. */
  read(orgId: string | null, noMutationSeconds: number, staleLimit: number) {
    return readPlatformStatus(this.pool, orgId, noMutationSeconds, staleLimit);
  }
}
