import type { Pool } from "pg";

/** What a resume request found. */
export type ResumeResult =
  | { kind: "not-found" }
  | { kind: "not-suspended"; status: string }
  | { kind: "resumed"; workflow: string; held: boolean; wakeAt: string };

/**
 * Brings a suspended (or held) execution of `orgId` forward to now: its wake time becomes now, so
 * the next turn runs as soon as it is woken (the caller wakes it), instead of after the
 * recovery back-off or the hold's retry delay. Recovery counts are kept: a resume is one more
 * attempt, not a fresh bound. Any other status is left alone and reported.
 */
export async function requestResume(pool: Pool, orgId: string, executionId: string): Promise<ResumeResult> {
  const { rows } = await pool.query<{ workflow: string; held: boolean; wake_at: Date }>(
    `UPDATE executions SET wake_at = now(), updated_at = now()
     WHERE id = $1 AND org_id = $2 AND status = 'suspended'
     RETURNING workflow, hold IS NOT NULL AS held, wake_at`,
    [executionId, orgId],
  );
  const row = rows[0];
  if (row)
    return { kind: "resumed", workflow: row.workflow, held: row.held, wakeAt: row.wake_at.toISOString() };
  const found = await pool.query<{ status: string }>(
    "SELECT status FROM executions WHERE id = $1 AND org_id = $2",
    [executionId, orgId],
  );
  const status = found.rows[0]?.status;
  return status === undefined ? { kind: "not-found" } : { kind: "not-suspended", status };
}
