import type { Pool } from "pg";
import { parseStoredCadence } from "./cadence-text.js";
import type { ScheduleCadence } from "./schedule-definition.js";
import { readScheduleSummaries, type ScheduleSummaryRecord } from "./store/pg-schedule-runs.js";

/**
 * How a schedule is doing, as the API and metrics report it:
 * - `ok`: ran on time and its last run succeeded (`lastOutcome` says whether it found work or
 *   `empty`: a genuine zero);
 * - `running`: a run has started and not yet finished, still within its cadence;
 * - `failing`: ran on time but the last run failed;
 * - `pending`: registered, never attempted, first tick not yet due;
 * - `overdue`: the next tick is late by more than one cadence (at least 30 s);
 * - `stopped`: nothing attempted for four cadences (at least 5 min) past due: the schedule, or
 *   every runner, stopped reporting;
 * - `paused`: an operator paused it; it is never late while paused, and lateness after a resume
 *   counts from the resume.
 */
export type ScheduleState = "ok" | "running" | "failing" | "pending" | "overdue" | "stopped" | "paused";

/** A schedule's state and the summary of its runs (registration time aside). */
export type ScheduleStatus = Omit<ScheduleSummaryRecord, "registeredAt" | "storedCadence"> & {
  /** The definition's cadence as the runners registered it; null for a row of an older release. */
  cadence: ScheduleCadence | null;
  state: ScheduleState;
  /** Milliseconds past the time the next attempt was due; 0 when not late. */
  lateByMs: number;
};

/** Lateness beyond which a schedule is overdue: one cadence, at least 30 s. */
export function overdueAfterMs(cadenceMs: number): number {
  return Math.max(cadenceMs, 30_000);
}

/** Lateness beyond which a schedule has stopped reporting: four cadences, at least 5 min. */
export function stoppedAfterMs(cadenceMs: number): number {
  return Math.max(4 * cadenceMs, 300_000);
}

/** The row fields the classification needs. */
export type ScheduleSummaryRow = Pick<
  ScheduleSummaryRecord,
  "cadenceMs" | "registeredAt" | "lastAttemptAt" | "lastOutcome"
> &
  Partial<Pick<ScheduleSummaryRecord, "pausedAt" | "resumedAt">>;

/** Classifies one schedule at `now` (pure; see {@link ScheduleState}). */
export function classifySchedule(
  row: ScheduleSummaryRow,
  now: Date,
): { state: ScheduleState; lateByMs: number } {
  if (row.pausedAt) return { state: "paused", lateByMs: 0 };
  const attempted = (row.lastAttemptAt ?? row.registeredAt).getTime();
  const reference = new Date(Math.max(attempted, row.resumedAt?.getTime() ?? 0));
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
  const { now, schedules } = await readScheduleSummaries(pool);
  return schedules.map(({ registeredAt, storedCadence, ...summary }) => ({
    ...summary,
    cadence: parseStoredCadence(storedCadence),
    ...classifySchedule({ ...summary, registeredAt }, now),
  }));
}
