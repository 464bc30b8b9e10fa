import type { Job } from "bullmq";
import type { Pool } from "pg";
import type { Logger } from "../observability/logger.js";
import type { ScheduleDefinition, ScheduleResult } from "./schedule-definition.js";
import { windowStart } from "./schedule-definition.js";
import {
  claimWindow,
  expiredWindow,
  finishRun,
  renewLease,
  type WindowClaim,
} from "./store/pg-schedule-runs.js";

/** How a tick ended: the run's outcome, or `skipped` when its window had already been started. */
export type TickOutcome = ScheduleResult["outcome"] | "skipped";

export interface TickDependencies {
  pool: Pool;
  logger: Logger;
  runnerId: string;
  /**
   * How long a claimed window stays this runner's without a renewal, in ms; renewed every third
   * of it while the run works. A crashed runner's window is claimed again after at most this
   * long. Default {@link DEFAULT_LEASE_MS}; the schedule service passes its BullMQ lock duration,
   * so a re-delivered tick (after a stall) finds the lease expired.
   */
  leaseMs?: number;
}

/** Lease of a claimed window when the caller sets none, in ms. */
export const DEFAULT_LEASE_MS = 30_000;

/** What a tick asked for by an operator carries (docs/schedules.md, "Pause, resume, trigger"). */
export interface TickTrigger {
  /** The subject of the key that asked; recorded on the run as `triggered_by`. */
  by: string;
}

/**
 * Runs one tick: claims the cycle key `(schedule, window)` under a lease, does the work while
 * renewing the lease, records attempt, outcome and duration. A window already started (and not
 * expired) is skipped. A run that throws is recorded as `failed` and does not throw further: the
 * record is the retry signal, not BullMQ. Then an earlier window of the same schedule whose run
 * was abandoned (lease expired, its tick job lost with its runner) is run too, one per tick. A
 * paused schedule's tick claims nothing and records nothing. A `trigger` runs the window of
 * `firedAt` again even when it already finished, never while it runs.
 */
export async function runScheduleTick(
  deps: TickDependencies,
  definition: ScheduleDefinition,
  firedAt: Date,
  trigger?: TickTrigger,
): Promise<TickOutcome> {
  const window = windowStart(definition.cadence, firedAt);
  const outcome = await runWindow(deps, definition, window, firedAt, trigger);
  const abandoned = await expiredWindow(deps.pool, definition.name, window);
  if (abandoned) {
    deps.logger.warn("reclaiming a schedule window abandoned by its runner", {
      schedule: definition.name,
      window: abandoned.toISOString(),
    });
    await runWindow(deps, definition, abandoned, firedAt);
  }
  return outcome;
}

async function runWindow(
  deps: TickDependencies,
  definition: ScheduleDefinition,
  window: Date,
  firedAt: Date,
  trigger?: TickTrigger,
): Promise<TickOutcome> {
  const leaseMs = deps.leaseMs ?? DEFAULT_LEASE_MS;
  const log = deps.logger.child({ jobId: `${definition.name}@${window.toISOString()}` });
  const claim = await claimWindow(
    deps.pool,
    definition.name,
    window,
    deps.runnerId,
    leaseMs,
    trigger?.by ?? null,
  );
  if (!claim) {
    log.debug("window already started elsewhere, or the schedule is paused; tick skipped", {
      schedule: definition.name,
    });
    return "skipped";
  }
  const renewal = keepLease(deps, claim, leaseMs, log);
  const started = performance.now();
  let result: ScheduleResult;
  try {
    result = await definition.run({ window, firedAt, attempt: claim.attempt, logger: log });
  } catch (error) {
    result = { outcome: "failed", summary: {}, error: (error as Error).message };
  } finally {
    clearInterval(renewal);
  }
  const durationMs = performance.now() - started;
  if (!(await finishRun(deps.pool, claim, result, durationMs))) {
    log.warn("schedule window was claimed again while this run worked; its outcome is not recorded", {
      schedule: definition.name,
      attempt: claim.attempt,
    });
  } else if (result.outcome === "failed")
    log.warn("schedule run failed", {
      schedule: definition.name,
      attempt: claim.attempt,
      error: result.error,
    });
  else log.debug("schedule run finished", { schedule: definition.name, outcome: result.outcome, durationMs });
  return result.outcome;
}

/** Renews the lease every third of its term until cleared; a failed renewal is logged, not fatal. */
function keepLease(
  deps: TickDependencies,
  claim: WindowClaim,
  leaseMs: number,
  log: Logger,
): ReturnType<typeof setInterval> {
  const timer = setInterval(
    () => {
      renewLease(deps.pool, claim, leaseMs).then(
        (held) => {
          if (!held)
            log.warn("schedule window lease lost", { schedule: claim.schedule, attempt: claim.attempt });
        },
        (error: Error) => log.warn("schedule window lease renewal failed", { error: error.message }),
      );
    },
    Math.max(10, Math.floor(leaseMs / 3)),
  );
  timer.unref();
  return timer;
}

/**
 * When a tick job was due. Job scheduler jobs carry it as `opts.prevMillis` and in their id
 * (`repeat:<scheduler>:<millis>`); a job added by hand falls back to its creation time.
 */
export function tickDueAt(job: Pick<Job, "id" | "opts" | "timestamp">): Date {
  const prev = (job.opts as { prevMillis?: unknown }).prevMillis;
  if (typeof prev === "number" && Number.isFinite(prev)) return new Date(prev);
  const fromId = /:(\d+)$/.exec(job.id ?? "")?.[1];
  if (fromId) return new Date(Number(fromId));
  return new Date(job.timestamp);
}
