import type { Pool } from "pg";

/**
 * How a schedule is doing, as the API and metrics report it:
 * - `ok`: ran on time and its last run succeeded (`lastOutcome` says whether it found work or
 *   `empty`: a genuine zero);
 * - `running`: a run has started and not yet finished, still within its cadence;
 * - `failing`: ran on time but the last run failed;
 * - `pending`: registered, never attempted, first tick not yet due;
 * - `overdue`: the next tick is late by more than one cadence (at least 30 s);
 * - `stopped`: nothing attempted for four cadences (at least 5 min) past due: the schedule, or
 *   every runner, stopped reporting.
 */
export type ScheduleState = "ok" | "running" | "failing" | "pending" | "overdue" | "stopped";

export interface ScheduleStatus {
  name: string;
  state: ScheduleState;
  cadenceMs: number;
  lastAttemptAt: Date | null;
  lastOutcome: "running" | "succeeded" | "empty" | "failed" | null;
  lastDurationMs: number | null;
  lastSuccessAt: Date | null;
  lastError: string | null;
  consecutiveFailures: number;
  /** Milliseconds past the time the next attempt was due; 0 when not late. */
  lateByMs: number;
}

/** Lateness beyond which a schedule is overdue: one cadence, at least 30 s. */
export function overdueAfterMs(cadenceMs: number): number {
  return Math.max(cadenceMs, 30_000);
}

/** Lateness beyond which a schedule has stopped reporting: four cadences, at least 5 min. */
export function stoppedAfterMs(cadenceMs: number): number {
  return Math.max(4 * cadenceMs, 300_000);
}

/** The row fields the classification needs. */
export interface ScheduleSummaryRow {
  cadenceMs: number;
  registeredAt: Date;
  lastAttemptAt: Date | null;
  lastOutcome: ScheduleStatus["lastOutcome"];
}

/** Classifies one schedule at `now` (pure; see {@link ScheduleState}). */
export function classifySchedule(
  row: ScheduleSummaryRow,
  now: Date,
): { state: ScheduleState; lateByMs: number } {
  const reference = row.lastAttemptAt ?? row.registeredAt;
  const lateByMs = Math.max(0, now.getTime() - (reference.getTime() + row.cadenceMs));
  if (lateByMs > stoppedAfterMs(row.cadenceMs)) return { state: "stopped", lateByMs };
  if (lateByMs > overdueAfterMs(row.cadenceMs)) return { state: "overdue", lateByMs };
  if (row.lastAttemptAt === null) return { state: "pending", lateByMs };
  if (row.lastOutcome === "failed") return { state: "failing", lateByMs };
  if (row.lastOutcome === "running") return { state: "running", lateByMs };
  return { state: "ok", lateByMs };
}

/** Every registered schedule with its state, classified against the database clock. */
export async function readScheduleStatuses(pool: Pool): Promise<ScheduleStatus[]> {
  const { rows } = await pool.query<{
    name: string;
    cadence_ms: number;
    registered_at: Date;
    last_attempt_at: Date | null;
    last_outcome: ScheduleStatus["lastOutcome"];
    last_duration_ms: number | null;
    last_success_at: Date | null;
    last_error: string | null;
    consecutive_failures: number;
    now: Date;
  }>(
    `SELECT name, cadence_ms, registered_at, last_attempt_at, last_outcome, last_duration_ms,
            last_success_at, last_error, consecutive_failures, now() AS now
       FROM schedules ORDER BY name`,
  );
  return rows.map((r) => {
    const summary: ScheduleSummaryRow = {
      cadenceMs: r.cadence_ms,
      registeredAt: r.registered_at,
      lastAttemptAt: r.last_attempt_at,
      lastOutcome: r.last_outcome,
    };
    return {
      name: r.name,
      ...classifySchedule(summary, r.now),
      cadenceMs: r.cadence_ms,
      lastAttemptAt: r.last_attempt_at,
      lastOutcome: r.last_outcome,
      lastDurationMs: r.last_duration_ms,
      lastSuccessAt: r.last_success_at,
      lastError: r.last_error,
      consecutiveFailures: r.consecutive_failures,
    };
  });
}
