import type { Pool } from "pg";

/** What a cancel request found: the executions marked (the target and its unfinished descendants). */
export interface CancelRequestResult {
  /** False when the target is already terminal: nothing was marked. */
  marked: boolean;
  status: string;
  cancelRequestedAt: string | null;
  /** Every execution marked, the target first; each needs waking. */
  executions: { id: string; workflow: string }[];
}

/** The API key that asked for a cancellation, as it was then (names and subjects may change later). */
export interface CancelActor {
  keyId: string;
  name: string;
  subject: string;
  role: string;
}

/** Who asks and why; both are kept on every execution the request marks. */
export interface CancelRequest {
  by?: CancelActor | null;
  /** Storable text, at most 2000 characters (validated by the caller). */
  reason?: string | null;
}

/**
 * Records a cooperative cancellation (`cancel_requested_at`) on an execution of `orgId` and on its
 * unfinished descendants, so a parent waiting on a child ends too: the child's next turn fails it
 * CANCELLED, which wakes the parent, whose next turn fails it CANCELLED. Repeating keeps the first
 * request: its time, who asked and why. Null when the organisation has no such execution.
 */
export async function requestCancellation(
  pool: Pool,
  orgId: string,
  executionId: string,
  request: CancelRequest = {},
): Promise<CancelRequestResult | null> {
  const target = await pool.query<{ status: string; cancel_requested_at: Date | null }>(
    "SELECT status, cancel_requested_at FROM executions WHERE id = $1 AND org_id = $2",
    [executionId, orgId],
  );
  const row = target.rows[0];
  if (!row) return null;
  if (row.status === "completed" || row.status === "failed") {
    return {
      marked: false,
      status: row.status,
      cancelRequestedAt: row.cancel_requested_at?.toISOString() ?? null,
      executions: [],
    };
  }
  const { rows } = await pool.query<{ id: string; workflow: string; cancel_requested_at: Date }>(
    `WITH RECURSIVE tree AS (
       SELECT id FROM executions WHERE id = $1 AND org_id = $2
       UNION ALL
       SELECT e.id FROM executions e JOIN tree t ON e.parent_id = t.id
     )
     UPDATE executions e SET cancel_requested_at = COALESCE(e.cancel_requested_at, now()),
       cancel_requested_by = CASE WHEN e.cancel_requested_at IS NULL THEN $3::jsonb ELSE e.cancel_requested_by END,
       cancel_reason = CASE WHEN e.cancel_requested_at IS NULL THEN $4::text ELSE e.cancel_reason END
     FROM tree WHERE e.id = tree.id AND e.status NOT IN ('completed', 'failed')
     RETURNING e.id, e.workflow, e.cancel_requested_at`,
    [executionId, orgId, request.by ? JSON.stringify(request.by) : null, request.reason ?? null],
  );
  const own = rows.find((r) => r.id === executionId);
  if (!own) {
    // It finished between the two statements.
    const now = await pool.query<{ status: string }>("SELECT status FROM executions WHERE id = $1", [
      executionId,
    ]);
    return {
      marked: false,
      status: now.rows[0]?.status ?? row.status,
      cancelRequestedAt: null,
      executions: [],
    };
  }
  return {
    marked: true,
    status: row.status,
    cancelRequestedAt: own.cancel_requested_at.toISOString(),
    executions: [...rows].sort((a, b) => (a.id === executionId ? -1 : b.id === executionId ? 1 : 0)),
  };
}
