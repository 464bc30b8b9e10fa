import type { Pool } from "pg";

/** Who asked for a pause, resume or trigger: the acting key's subject and id. */
export interface ScheduleActor {
  subject: string;
  keyId: string;
}

/** How a pause or resume went: the schedule is unknown, or it is now as asked (`changed` if it was not). */
export type PauseChange = { found: false } | { found: true; changed: boolean };

/**
 * Pauses `name` (docs/schedules.md, "Pause, resume, trigger"). A schedule already paused keeps its
 * first pause (when and by whom); `changed` says whether this call paused it.
 */
export async function pauseSchedule(pool: Pool, name: string, actor: ScheduleActor): Promise<PauseChange> {
  const { rows } = await pool.query<{ found: number; changed: number }>(
    `WITH target AS (SELECT name, paused_at FROM schedules WHERE name = $1 FOR UPDATE),
     changed AS (
       UPDATE schedules s SET paused_at = now(), paused_by = $2, paused_by_key_id = $3::uuid
         FROM target WHERE s.name = target.name AND target.paused_at IS NULL
       RETURNING s.name
     )
     SELECT (SELECT count(*) FROM target)::int AS found, (SELECT count(*) FROM changed)::int AS changed`,
    [name, actor.subject, actor.keyId],
  );
  const row = rows[0];
  return row && row.found > 0 ? { found: true, changed: row.changed > 0 } : { found: false };
}

/** Resumes `name`: clears the pause and records when, so lateness counts from now. */
export async function resumeSchedule(pool: Pool, name: string): Promise<PauseChange> {
  const { rows } = await pool.query<{ found: number; changed: number }>(
    `WITH target AS (SELECT name, paused_at FROM schedules WHERE name = $1 FOR UPDATE),
     changed AS (
       UPDATE schedules s
          SET paused_at = NULL, paused_by = NULL, paused_by_key_id = NULL, resumed_at = now()
         FROM target WHERE s.name = target.name AND target.paused_at IS NOT NULL
       RETURNING s.name
     )
     SELECT (SELECT count(*) FROM target)::int AS found, (SELECT count(*) FROM changed)::int AS changed`,
    [name],
  );
  const row = rows[0];
  return row && row.found > 0 ? { found: true, changed: row.changed > 0 } : { found: false };
}

/** Names of the schedules paused now: runners keep no job scheduler for them. */
export async function pausedScheduleNames(pool: Pool): Promise<Set<string>> {
  const { rows } = await pool.query<{ name: string }>(
    "SELECT name FROM schedules WHERE paused_at IS NOT NULL",
  );
  return new Set(rows.map((r) => r.name));
}

/** A run of a schedule working now under a live lease. */
export interface LiveRun {
  window: Date;
  attempt: number;
  runnerId: string;
  leaseUntil: Date;
  triggeredBy: string | null;
}

/** The newest run of `schedule` that is running under a live lease, or null. */
export async function liveRun(pool: Pool, schedule: string): Promise<LiveRun | null> {
  const { rows } = await pool.query<{
    window_start: Date;
    attempt: number;
    runner_id: string;
    lease_until: Date;
    triggered_by: string | null;
  }>(
    `SELECT window_start, attempt, runner_id, lease_until, triggered_by FROM schedule_runs
      WHERE schedule = $1 AND outcome = 'running' AND lease_until > now()
      ORDER BY window_start DESC LIMIT 1`,
    [schedule],
  );
  const row = rows[0];
  return row
    ? {
        window: row.window_start,
        attempt: row.attempt,
        runnerId: row.runner_id,
        leaseUntil: row.lease_until,
        triggeredBy: row.triggered_by,
      }
    : null;
}
