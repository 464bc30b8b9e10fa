import type { Pool } from "pg";
import type { Logger } from "../../observability/logger.js";
import { withTransaction } from "../../store/with-transaction.js";

/** At most this many missing hour buckets are rebuilt per cycle (docs/schedules.md, "Rollups"). */
export const MAX_ROLLUP_HOURS_PER_CYCLE = 24;

export interface RollupOptions {
  pool: Pool;
  logger: Logger;
  /** Hours older than the retention window are never backfilled: their executions may be gone. */
  retentionDays: number;
  /** The cycle's clock; default the database's `now()`. Tests pass a simulated time. */
  now?: Date;
  maxHoursPerCycle?: number;
}

export interface RollupReport {
  /** Hours rebuilt this cycle, newest first (ISO). */
  rebuilt: string[];
  /** True when more hours were missing than one cycle may rebuild. */
  capped: boolean;
  /** Missing hours left for the next cycles. */
  gapHoursRemaining: number;
}

/**
 * Builds the hourly buckets of execution outcomes (`execution_rollups`: per completion hour UTC
 * and workflow, the `completed` and `failed` counts) for every complete hour that has none yet.
 * An hour is complete one minute after it ends, so late commits land in it. After downtime the
 * gap is rebuilt newest first, at most {@link MAX_ROLLUP_HOURS_PER_CYCLE} hours per cycle; the
 * log says whether the cycle capped and how many gap hours remain.
 *
 * Hours considered start at the first hour ever built (on the first run: the hour of the oldest
 * finished execution, or the last complete hour when there is none), never before the retention
 * window.
 */
export async function rebuildRollups(options: RollupOptions): Promise<RollupReport> {
  const max = options.maxHoursPerCycle ?? MAX_ROLLUP_HOURS_PER_CYCLE;
  const { rows } = await options.pool.query<{ hour: Date }>(
    `WITH clock AS (SELECT coalesce($1::timestamptz, now()) AS now),
     bounds AS (
       SELECT date_trunc('hour', clock.now - interval '1 minute', 'UTC') - interval '1 hour' AS last_complete,
              greatest(
                coalesce((SELECT min(hour) FROM rollup_hours),
                         (SELECT date_trunc('hour', min(completed_at), 'UTC') FROM executions
                           WHERE status IN ('completed', 'failed')),
                         date_trunc('hour', clock.now - interval '1 minute', 'UTC') - interval '1 hour'),
                date_trunc('hour', clock.now - make_interval(days => $2), 'UTC')
              ) AS first
         FROM clock
     )
     SELECT h AS hour FROM bounds, generate_series(bounds.first, bounds.last_complete, interval '1 hour') AS h
      WHERE NOT EXISTS (SELECT 1 FROM rollup_hours r WHERE r.hour = h)
      ORDER BY h DESC`,
    [options.now ?? null, options.retentionDays],
  );
  const todo = rows.slice(0, max).map((r) => r.hour);
  for (const hour of todo) await buildHour(options.pool, hour);
  const report: RollupReport = {
    rebuilt: todo.map((h) => h.toISOString()),
    capped: rows.length > max,
    gapHoursRemaining: rows.length - todo.length,
  };
  if (report.capped)
    options.logger.warn("rollup backfill capped; the next cycles continue", {
      rebuilt: report.rebuilt.length,
      capped: true,
      gapHoursRemaining: report.gapHoursRemaining,
    });
  else if (todo.length > 0)
    options.logger.info("rollup buckets built", {
      rebuilt: todo.length,
      capped: false,
      gapHoursRemaining: 0,
    });
  return report;
}

/** Replaces one hour's buckets and marks the hour built, in one transaction. */
async function buildHour(pool: Pool, hour: Date): Promise<void> {
  await withTransaction(pool, async (client) => {
    await client.query("DELETE FROM execution_rollups WHERE hour = $1", [hour]);
    const { rows } = await client.query<{ n: number }>(
      `WITH buckets AS (
         INSERT INTO execution_rollups (hour, workflow, completed, failed)
         SELECT $1, workflow, count(*) FILTER (WHERE status = 'completed'), count(*) FILTER (WHERE status = 'failed')
           FROM executions
          WHERE status IN ('completed', 'failed') AND completed_at >= $1 AND completed_at < $1 + interval '1 hour'
          GROUP BY workflow
         RETURNING completed + failed AS n
       )
       SELECT coalesce(sum(n), 0)::int AS n FROM buckets`,
      [hour],
    );
    await client.query(
      `INSERT INTO rollup_hours (hour, executions, built_at) VALUES ($1, $2, now())
       ON CONFLICT (hour) DO UPDATE SET executions = excluded.executions, built_at = now()`,
      [hour, rows[0]?.n ?? 0],
    );
  });
}
