import type { Pool } from "pg";
import { pgRetentionPolicy, type RetentionPolicy } from "./retention-policy.js";

/**
 * Finished schedule runs older than the cutoff. The per-schedule summary (`schedules`: last
 * attempt, outcome, last success) is kept, so status survives the history it summarises. A run
 * still `running` is never deleted: its row is the cycle key that stops the window from starting again.
 */
export function scheduleRunRetentionPolicy(pool: Pool): RetentionPolicy {
  return pgRetentionPolicy(pool, {
    name: "schedule-runs",
    async deleteBatch(client, cutoff, limit) {
      const { rows } = await client.query<{ n: number }>(
        `WITH doomed AS (
           SELECT id FROM schedule_runs
            WHERE outcome <> 'running' AND started_at < $1
            ORDER BY started_at LIMIT $2
            FOR UPDATE SKIP LOCKED
         ), gone AS (DELETE FROM schedule_runs r USING doomed WHERE r.id = doomed.id RETURNING 1)
         SELECT count(*)::int AS n FROM gone`,
        [cutoff, limit],
      );
      const n = rows[0]?.n ?? 0;
      return { deleted: { schedule_runs: n }, primary: n };
    },
    async remaining(db, cutoff) {
      const { rows } = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM schedule_runs WHERE outcome <> 'running' AND started_at < $1",
        [cutoff],
      );
      return rows[0]?.n ?? 0;
    },
  });
}
