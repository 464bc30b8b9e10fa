import type { Pool } from "pg";
import { pgRetentionPolicy, type RetentionPolicy } from "./retention-policy.js";

/**
 * Terminal executions (`completed`, `failed`) whose `completed_at` is older than the cutoff, with
 * their journal and signals (counted) and any other cascading child rows. An execution with a
 * child that is still running is kept, so the child can still report to it. Rows another
 * transaction holds are skipped, not waited on (`FOR UPDATE SKIP LOCKED`); the next pass gets them.
 */
export function executionRetentionPolicy(pool: Pool): RetentionPolicy {
  return pgRetentionPolicy(pool, {
    name: "executions",
    async deleteBatch(client, cutoff, limit) {
      const { rows } = await client.query<{ executions: number; journal: number; signals: number }>(
        `WITH doomed AS (
           SELECT e.id FROM executions e
            WHERE e.status IN ('completed', 'failed') AND e.completed_at < $1
              AND NOT EXISTS (SELECT 1 FROM executions c
                               WHERE c.parent_id = e.id AND c.status NOT IN ('completed', 'failed'))
            ORDER BY e.completed_at
            LIMIT $2
            FOR UPDATE SKIP LOCKED
         ),
         journal AS (DELETE FROM journal_entries j USING doomed WHERE j.execution_id = doomed.id RETURNING 1),
         signals AS (DELETE FROM signals s USING doomed WHERE s.execution_id = doomed.id RETURNING 1),
         gone AS (DELETE FROM executions e USING doomed WHERE e.id = doomed.id RETURNING 1)
         SELECT (SELECT count(*) FROM gone)::int AS executions,
                (SELECT count(*) FROM journal)::int AS journal,
                (SELECT count(*) FROM signals)::int AS signals`,
        [cutoff, limit],
      );
      const row = rows[0] ?? { executions: 0, journal: 0, signals: 0 };
      return {
        deleted: { executions: row.executions, journal_entries: row.journal, signals: row.signals },
        primary: row.executions,
      };
    },
    async remaining(db, cutoff) {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM executions
          WHERE status IN ('completed', 'failed') AND completed_at < $1`,
        [cutoff],
      );
      return rows[0]?.n ?? 0;
    },
  });
}
