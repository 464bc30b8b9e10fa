import type { Pool } from "pg";

/**
 * Waiting executions whose wake-up time (a timer, or a wait's deadline) is at or before `at`: the
 * ones the test kit wakes after moving its clock forward (src/testing). The sweep does the same
 * against the database's own clock.
 *
 * @param limit - rows at most (default 1000).
 */
export async function executionsDueBy(
  pool: Pool,
  at: Date,
  limit = 1_000,
): Promise<{ id: string; workflow: string }[]> {
  const { rows } = await pool.query<{ id: string; workflow: string }>(
    `SELECT id, workflow FROM executions
     WHERE status = 'waiting' AND wake_at IS NOT NULL AND wake_at <= $1
     ORDER BY wake_at LIMIT $2`,
    [at, limit],
  );
  return rows;
}
