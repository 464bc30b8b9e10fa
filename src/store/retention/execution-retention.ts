import type { Pool } from "pg";
import { pgRetentionPolicy, type RetentionPolicy } from "./retention-policy.js";

/**
 * An execution is past retention when it is terminal (`completed`, `failed`) with `completed_at`
 * older than the cutoff `$1`, no child of it is unfinished (the child can still report to it), and
 * every ancestor is past retention too: a parent that is unfinished (held, suspended, waiting) may
 * replay and would re-create and re-run a deleted child, so its whole line is kept. A line past
 * retention goes together (a parent and its children may leave in different batches: a child
 * whose parent is already gone has no ancestor left to protect).
 */
const PAST_RETENTION = `
  e.status IN ('completed', 'failed') AND e.completed_at < $1
  AND NOT EXISTS (SELECT 1 FROM executions c
                   WHERE c.parent_id = e.id AND c.status NOT IN ('completed', 'failed'))
  AND NOT EXISTS (
    WITH RECURSIVE ancestors(id, parent_id, status, completed_at) AS (
      SELECT p.id, p.parent_id, p.status, p.completed_at FROM executions p WHERE p.id = e.parent_id
      UNION ALL
      SELECT p.id, p.parent_id, p.status, p.completed_at
        FROM executions p JOIN ancestors a ON p.id = a.parent_id
    )
    SELECT 1 FROM ancestors a
     WHERE a.status NOT IN ('completed', 'failed') OR a.completed_at IS NULL OR a.completed_at >= $1
  )`;

/**
 * Executions past retention (see PAST_RETENTION) with their journal and signals (counted) and any
 * other cascading child rows. Rows another transaction holds are skipped, not waited on
 * (`FOR UPDATE SKIP LOCKED`); the next pass gets them.
 */
export function executionRetentionPolicy(pool: Pool): RetentionPolicy {
  return pgRetentionPolicy(pool, {
    name: "executions",
    async deleteBatch(client, cutoff, limit) {
      const { rows } = await client.query<{ executions: number; journal: number; signals: number }>(
        `WITH doomed AS (
           SELECT e.id FROM executions e
            WHERE ${PAST_RETENTION}
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
        `SELECT count(*)::int AS n FROM executions e WHERE ${PAST_RETENTION}`,
        [cutoff],
      );
      return rows[0]?.n ?? 0;
    },
  });
}
