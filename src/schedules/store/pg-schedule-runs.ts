import type { Pool } from "pg";
import { prismaFor } from "../../store/prisma.js";

/** How a run ended, as recorded. */
export interface RunOutcome {
  outcome: "succeeded" | "empty" | "failed";
  /** JSON-safe counts, stored on the run. */
  summary: Record<string, unknown>;
  /** Required when `outcome` is `failed`. */
  error?: string;
}

/** A claimed window: the `schedule_runs` row this runner now works under. */
export interface WindowClaim {
  runId: string;
  schedule: string;
  window: Date;
  attempt: number;
}

/**
 * Records (or updates the cadence of) every schedule this runner defines, so status can see them.
 * `cadence` is the definition's, as JSON (src/schedules/cadence-text.ts reads it back). A pause is
 * never touched here: registering a paused schedule leaves it paused.
 */
export async function upsertSchedules(
  pool: Pool,
  definitions: readonly { name: string; cadenceMs: number; cadence: Record<string, unknown> }[],
): Promise<void> {
  const db = prismaFor(pool);
  await db.$transaction(
    definitions.map(({ name, cadenceMs, cadence }) =>
      db.schedule.upsert({
        where: { name },
        create: { name, cadenceMs, cadence: cadence as object },
        update: { cadenceMs, cadence: cadence as object },
      }),
    ),
  );
}

/**
 * Takes the cycle key `(schedule, window)` with a lease of `leaseMs`. Returns null when the
 * schedule is paused (nothing is recorded), or when the window was already started by anyone and
 * is not reclaimable: succeeded, empty, or running under a live lease (a duplicate tick or a
 * handoff does no work). A window whose last attempt failed, or whose running attempt let its
 * lease expire (its runner crashed or froze), is claimed again with the next attempt number. A
 * running row without a lease (written before leases existed) counts as expired. A trigger
 * (`triggeredBy` set, docs/schedules.md, "Pause, resume, trigger") also claims a finished window
 * again, never a running one.
 */
export async function claimWindow(
  pool: Pool,
  schedule: string,
  window: Date,
  runnerId: string,
  leaseMs: number,
  triggeredBy: string | null = null,
): Promise<WindowClaim | null> {
  const { rows } = await pool.query<{ id: string; attempt: number }>(
    `WITH claim AS (
       INSERT INTO schedule_runs
              (schedule, window_start, attempt, outcome, runner_id, started_at, lease_until, triggered_by)
       SELECT $1, $2, 1, 'running', $3, now(), now() + make_interval(secs => $4::float / 1000), $5::text
        WHERE NOT EXISTS (SELECT 1 FROM schedules WHERE name = $1 AND paused_at IS NOT NULL)
       ON CONFLICT (schedule, window_start) DO UPDATE
         SET attempt = schedule_runs.attempt + 1, outcome = 'running', runner_id = excluded.runner_id,
             started_at = now(), finished_at = NULL, duration_ms = NULL, result = NULL, error = NULL,
             lease_until = excluded.lease_until, triggered_by = excluded.triggered_by
         WHERE schedule_runs.outcome = 'failed'
            OR (schedule_runs.outcome = 'running'
                AND (schedule_runs.lease_until IS NULL OR schedule_runs.lease_until < now()))
            OR (excluded.triggered_by IS NOT NULL AND schedule_runs.outcome <> 'running')
       RETURNING id::text, attempt
     ), touched AS (
       UPDATE schedules SET last_attempt_at = now(), last_window = $2
        WHERE name = $1 AND EXISTS (SELECT 1 FROM claim)
     )
     SELECT id, attempt FROM claim`,
    [schedule, window, runnerId, leaseMs, triggeredBy],
  );
  const row = rows[0];
  return row ? { runId: row.id, schedule, window, attempt: row.attempt } : null;
}

/** Extends the claim's lease; false when the claim is no longer this attempt's (reclaimed). */
export async function renewLease(pool: Pool, claim: WindowClaim, leaseMs: number): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE schedule_runs SET lease_until = now() + make_interval(secs => $3::float / 1000)
      WHERE id = $1::bigint AND attempt = $2 AND outcome = 'running'`,
    [claim.runId, claim.attempt, leaseMs],
  );
  return rowCount === 1;
}

/**
 * The earliest window of `schedule` before `before` whose running attempt let its lease expire:
 * a run whose runner died and whose tick job was lost with it. Null when there is none.
 */
export async function expiredWindow(pool: Pool, schedule: string, before: Date): Promise<Date | null> {
  const { rows } = await pool.query<{ window_start: Date }>(
    `SELECT window_start FROM schedule_runs
      WHERE schedule = $1 AND window_start < $2 AND outcome = 'running'
        AND (lease_until IS NULL OR lease_until < now())
      ORDER BY window_start LIMIT 1`,
    [schedule, before],
  );
  return rows[0]?.window_start ?? null;
}

/**
 * Records how a claimed run ended, on the run and on the schedule's summary, in one statement.
 * Fenced by the attempt: false (nothing recorded) when the window was claimed again meanwhile.
 */
export async function finishRun(
  pool: Pool,
  claim: WindowClaim,
  result: RunOutcome,
  durationMs: number,
): Promise<boolean> {
  const { rows } = await pool.query(
    `WITH run AS (
       UPDATE schedule_runs
          SET outcome = $2::text::"ScheduleOutcome", finished_at = now(), duration_ms = $3, result = $4::jsonb,
              error = $5, lease_until = NULL
        WHERE id = $1::bigint AND attempt = $6 AND outcome = 'running'
       RETURNING schedule
     ), summary AS (
     UPDATE schedules s
        SET last_outcome = $2::text::"ScheduleOutcome", last_duration_ms = $3,
            last_success_at = CASE WHEN $2::text = 'failed' THEN s.last_success_at ELSE now() END,
            last_error = CASE WHEN $2::text = 'failed' THEN $5 ELSE NULL END,
            consecutive_failures = CASE WHEN $2::text = 'failed' THEN s.consecutive_failures + 1 ELSE 0 END
       FROM run WHERE s.name = run.schedule
     )
     SELECT schedule FROM run`,
    [
      claim.runId,
      result.outcome,
      Math.round(durationMs),
      JSON.stringify(result.summary),
      result.error ?? null,
      claim.attempt,
    ],
  );
  return rows.length === 1;
}

/** One `schedules` row: the summary of a schedule's runs, its stored cadence and its pause. */
export interface ScheduleSummaryRecord {
  name: string;
  cadenceMs: number;
  /** The definition's cadence as stored (`schedules.cadence`): parse it with parseStoredCadence. */
  storedCadence: unknown;
  registeredAt: Date;
  lastAttemptAt: Date | null;
  lastOutcome: "running" | "succeeded" | "empty" | "failed" | null;
  lastDurationMs: number | null;
  lastSuccessAt: Date | null;
  lastError: string | null;
  consecutiveFailures: number;
  pausedAt: Date | null;
  pausedBy: string | null;
  resumedAt: Date | null;
}

/** Every registered schedule's summary, by name, with the database clock to classify them against. */
export async function readScheduleSummaries(
  pool: Pool,
): Promise<{ now: Date; schedules: ScheduleSummaryRecord[] }> {
  const db = prismaFor(pool);
  // The database clock, not this process's: replicas with skewed clocks classify alike.
  const [clock, rows] = await Promise.all([
    db.$queryRaw<{ now: Date }[]>`SELECT now() AS now`,
    db.schedule.findMany({ orderBy: { name: "asc" } }),
  ]);
  return {
    now: clock[0]?.now ?? new Date(),
    schedules: rows.map((r) => ({
      name: r.name,
      cadenceMs: r.cadenceMs,
      storedCadence: r.cadence,
      registeredAt: r.registeredAt,
      lastAttemptAt: r.lastAttemptAt,
      lastOutcome: r.lastOutcome,
      lastDurationMs: r.lastDurationMs,
      lastSuccessAt: r.lastSuccessAt,
      lastError: r.lastError,
      consecutiveFailures: r.consecutiveFailures,
      pausedAt: r.pausedAt,
      pausedBy: r.pausedBy,
      resumedAt: r.resumedAt,
    })),
  };
}
