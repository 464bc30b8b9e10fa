import type { Logger } from "../observability/logger.js";
import type { RunOutcome } from "./store/pg-schedule-runs.js";

/** Names of the runner schedules: BullMQ job scheduler ids, job names and `schedules.name` rows. */
export const SCHEDULE_NAMES = {
  executionSweep: "execution-sweep",
  monitoringRollups: "monitoring-rollups",
  blockchainHealth: "blockchain-health",
  retention: "retention",
  nonceRecovery: "nonce-recovery",
  bulkOperations: "bulk-operations",
} as const;

/**
 * When a schedule ticks. `every` maps to a BullMQ job scheduler's `every` (milliseconds); `cron`
 * to its `pattern` in `tz`, with `periodMs` the pattern's period (a daily pattern: 86 400 000).
 */
export type ScheduleCadence =
  | { kind: "every"; everyMs: number }
  | { kind: "cron"; pattern: string; tz: string; periodMs: number };

/** What a run reports. `empty` is a genuine zero: it ran and found nothing to do. */
export type ScheduleResult = RunOutcome;

export interface ScheduleRunContext {
  /** Start of the window this tick covers: the cycle key with the schedule's name. */
  window: Date;
  /** When the tick was due (the job scheduler's time), not when it happened to run. */
  firedAt: Date;
  attempt: number;
  logger: Logger;
}

/** A schedule defined in code; its cadence comes from configuration. Runs only on runners. */
export interface ScheduleDefinition {
  name: string;
  cadence: ScheduleCadence;
  /** Does the window's durable work. Throwing records a failed run (the window may be retried). */
  run(ctx: ScheduleRunContext): Promise<ScheduleResult>;
}

/** The time between two ticks, in milliseconds. */
export function cadencePeriodMs(cadence: ScheduleCadence): number {
  return cadence.kind === "every" ? cadence.everyMs : cadence.periodMs;
}

/**
 * The window a tick due at `firedAt` belongs to: `firedAt` rounded down to a multiple of the
 * period since the epoch (UTC). A duplicate tick, a re-delivered job or a tick handed to another
 * runner for the same window computes the same start, so the cycle key refuses it.
 */
export function windowStart(cadence: ScheduleCadence, firedAt: Date): Date {
  const period = cadencePeriodMs(cadence);
  return new Date(Math.floor(firedAt.getTime() / period) * period);
}
