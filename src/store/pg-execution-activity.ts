import type { Pool } from "pg";

/**
 * When executions last showed a sign of life in PostgreSQL: the newest of the row's update and
 * its journal's writes. A runner that died wrote nothing after this instant, so "now minus this"
 * is how long its executions waited for a takeover (src/runtime/takeover-log.ts).
 */
export async function lastActivityOf(pool: Pool, executionIds: readonly string[]): Promise<Date | null> {
  if (executionIds.length === 0) return null;
  const { rows } = await pool.query<{ at: Date | null }>(
    `SELECT max(GREATEST(e.updated_at, (
              SELECT max(GREATEST(j.started_at, j.completed_at)) FROM journal_entries j WHERE j.execution_id = e.id
            ))) AS at
     FROM executions e WHERE e.id = ANY($1::uuid[])`,
    [executionIds],
  );
  return rows[0]?.at ?? null;
}
