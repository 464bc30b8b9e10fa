import type { Pool } from "pg";
import { cadencePeriodMs, type ScheduleDefinition, type ScheduleResult } from "./schedule-definition.js";

/** A claimed window: the `schedule_runs` row this runner now works under. */
export interface WindowClaim {
  runId: string;
  schedule: string;
  window: Date;
  attempt: number;
}

/** Records (or updates the cadence of) every schedule this runner defines, so status can see them. */
export async function registerSchedules(
  pool: Pool,
  definitions: readonly ScheduleDefinition[],
): Promise<void> {
  await pool.query(
    `INSERT INTO schedules (name, cadence_ms)
     SELECT * FROM unnest($1::text[], $2::int[])
     ON CONFLICT (name) DO UPDATE SET cadence_ms = excluded.cadence_ms`,
    [definitions.map((d) => d.name), definitions.map((d) => cadencePeriodMs(d.cadence))],
  );
}

/**
 * Takes the cycle key `(schedule, window)`. Returns null when the window was already started by
 * anyone (running, succeeded or empty): a duplicate tick or a handoff does no work. A window whose
 * last attempt failed is claimed again with the next attempt number.
 */
export async function claimWindow(
  pool: Pool,
  schedule: string,
  window: Date,
  runnerId: string,
): Promise<WindowClaim | null> {
  const { rows } = await pool.query<{ id: string; attempt: number }>(
    `WITH claim AS (
       INSERT INTO schedule_runs (schedule, window_start, attempt, outcome, runner_id, started_at)
       VALUES ($1, $2, 1, 'running', $3, now())
       ON CONFLICT (schedule, window_start) DO UPDATE
         SET attempt = schedule_runs.attempt + 1, outcome = 'running', runner_id = excluded.runner_id,
             started_at = now(), finished_at = NULL, duration_ms = NULL, result = NULL, error = NULL
         WHERE schedule_runs.outcome = 'failed'
       RETURNING id::text, attempt
     ), touched AS (
       UPDATE schedules SET last_attempt_at = now(), last_window = $2
        WHERE name = $1 AND EXISTS (SELECT 1 FROM claim)
     )
     SELECT id, attempt FROM claim`,
    [schedule, window, runnerId],
  );
  const row = rows[0];
  return row ? { runId: row.id, schedule, window, attempt: row.attempt } : null;
}

/** Records how a claimed run ended, on the run and on the schedule's summary, in one statement. */
export async function finishRun(
  pool: Pool,
  claim: WindowClaim,
  result: ScheduleResult,
  durationMs: number,
): Promise<void> {
  await pool.query(
    `WITH run AS (
       UPDATE schedule_runs
          SET outcome = $2::text::"ScheduleOutcome", finished_at = now(), duration_ms = $3, result = $4::jsonb, error = $5
        WHERE id = $1::bigint
       RETURNING schedule
     )
     UPDATE schedules s
        SET last_outcome = $2::text::"ScheduleOutcome", last_duration_ms = $3,
            last_success_at = CASE WHEN $2::text = 'failed' THEN s.last_success_at ELSE now() END,
            last_error = CASE WHEN $2::text = 'failed' THEN $5 ELSE NULL END,
            consecutive_failures = CASE WHEN $2::text = 'failed' THEN s.consecutive_failures + 1 ELSE 0 END
       FROM run WHERE s.name = run.schedule`,
    [
      claim.runId,
      result.outcome,
      Math.round(durationMs),
      JSON.stringify(result.summary),
      result.error ?? null,
    ],
  );
}
