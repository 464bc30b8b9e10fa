import type { Job } from "bullmq";
import type { Pool } from "pg";
import type { Logger } from "../observability/logger.js";
import type { ScheduleDefinition, ScheduleResult } from "./schedule-definition.js";
import { windowStart } from "./schedule-definition.js";
import { claimWindow, finishRun } from "./schedule-runs.js";

/** How a tick ended: the run's outcome, or `skipped` when its window had already been started. */
export type TickOutcome = ScheduleResult["outcome"] | "skipped";

export interface TickDependencies {
  pool: Pool;
  logger: Logger;
  runnerId: string;
}

/**
 * Runs one tick: claims the cycle key `(schedule, window)`, does the work, records attempt,
 * outcome and duration. A window already started is skipped. A run that throws is recorded as
 * `failed` and does not throw further: the record is the retry signal, not BullMQ.
 */
export async function runScheduleTick(
  deps: TickDependencies,
  definition: ScheduleDefinition,
  firedAt: Date,
): Promise<TickOutcome> {
  const window = windowStart(definition.cadence, firedAt);
  const log = deps.logger.child({ jobId: `${definition.name}@${window.toISOString()}` });
  const claim = await claimWindow(deps.pool, definition.name, window, deps.runnerId);
  if (!claim) {
    log.debug("window already started elsewhere; tick skipped", { schedule: definition.name });
    return "skipped";
  }
  const started = performance.now();
  let result: ScheduleResult;
  try {
    result = await definition.run({ window, firedAt, attempt: claim.attempt, logger: log });
  } catch (error) {
    result = { outcome: "failed", summary: {}, error: (error as Error).message };
  }
  const durationMs = performance.now() - started;
  await finishRun(deps.pool, claim, result, durationMs);
  if (result.outcome === "failed")
    log.warn("schedule run failed", {
      schedule: definition.name,
      attempt: claim.attempt,
      error: result.error,
    });
  else log.debug("schedule run finished", { schedule: definition.name, outcome: result.outcome, durationMs });
  return result.outcome;
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
