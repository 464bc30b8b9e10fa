import type { Pool } from "pg";

/**
 * The reads of the convergent sweep and of a runner's start (src/runtime/execution-sweep.ts,
 * src/roles/runner-engine.ts): unfinished executions that may have lost their job, cancellations
 * that may have lost their wake, and executions held for a retry with a new release.
 */

/** An unfinished execution and its recorded wake time. */
export interface SweepCandidate {
  id: string;
  workflow: string;
  wake_at: Date | null;
}

/**
 * Unfinished executions, by id after `after`, untouched for `graceMs`: neither the row nor (for a
 * running one) its newest journal position. Keyed executions not yet admitted are left out: they
 * belong to the keyed repair, never to the sweep.
 */
export async function staleUnfinishedExecutions(
  pool: Pool,
  graceMs: number,
  after: string,
  limit: number,
): Promise<SweepCandidate[]> {
  const { rows } = await pool.query<SweepCandidate>(
    `SELECT id, workflow, wake_at FROM executions e
     WHERE status IN ('running', 'waiting', 'suspended') AND updated_at < now() - make_interval(secs => $1::float / 1000)
       AND id > $2
       -- A running turn journals without touching the row: its newest position counts as activity.
       AND NOT (status = 'running' AND COALESCE((
             SELECT GREATEST(j.started_at, j.completed_at) FROM journal_entries j
             WHERE j.execution_id = e.id ORDER BY j.position DESC LIMIT 1
           ), updated_at) >= now() - make_interval(secs => $1::float / 1000))
       -- Keyed executions not yet admitted are the keyed repair's (src/keyed), never enqueued here.
       AND NOT (turn = 0 AND status = 'waiting' AND key IS NOT NULL)
     ORDER BY id LIMIT $3`,
    [graceMs, after, limit],
  );
  return rows;
}

/** Unfinished executions whose cancellation was requested more than `graceMs` ago. */
export async function cancelRequestedUnfinished(
  pool: Pool,
  graceMs: number,
  limit: number,
): Promise<{ id: string; workflow: string }[]> {
  const { rows } = await pool.query<{ id: string; workflow: string }>(
    `SELECT id, workflow FROM executions
     WHERE status IN ('running', 'waiting', 'suspended') AND cancel_requested_at IS NOT NULL
       AND cancel_requested_at < now() - make_interval(secs => $1::float / 1000)
     LIMIT $2`,
    [graceMs, limit],
  );
  return rows;
}

/** Suspended executions held for non-determinism or an unknown workflow (at most `limit`). */
export async function heldExecutions(pool: Pool, limit: number): Promise<{ id: string; workflow: string }[]> {
  const { rows } = await pool.query<{ id: string; workflow: string }>(
    "SELECT id, workflow FROM executions WHERE hold IS NOT NULL AND status = 'suspended' LIMIT $1",
    [limit],
  );
  return rows;
}
