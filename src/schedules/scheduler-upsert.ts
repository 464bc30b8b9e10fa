import type { JobSchedulerJson, Queue, RepeatOptions } from "bullmq";
import type { Redis } from "ioredis";
import Redlock from "redlock";
import type { Logger } from "../observability/logger.js";
import { repeatOptionsOf } from "./cadence-text.js";
import type { ScheduleDefinition } from "./schedule-definition.js";

/**
 * Data of every tick job: which schedule it is and, for a tick an operator asked for now
 * (docs/schedules.md, "Pause, resume, trigger"), who asked and when (ms since the epoch: the
 * tick's due time, which picks its window).
 */
export interface ScheduleJobData {
  schedule: string;
  trigger?: { by: string; requestedAt: number };
}

/**
 * Options of the tick jobs. Completed ticks are kept briefly for Bull Board and removed by count;
 * the retention pass also removes any older than the window. `attempts: 1`: a failed window is
 * recorded in PostgreSQL and retried by the next tick for it, not by BullMQ.
 */
export const TICK_JOB_OPTIONS = {
  attempts: 1,
  removeOnComplete: { count: 200 },
  removeOnFail: { count: 500 },
};

/** How long the upsert lock lives if its holder dies, in milliseconds; an upsert takes a few. */
const UPSERT_LOCK_TTL_MS = 10_000;

export interface SchedulerUpsertReport {
  created: string[];
  updated: string[];
  removed: string[];
}

function repeatOptions(definition: ScheduleDefinition): Omit<RepeatOptions, "key"> {
  return repeatOptionsOf(definition.cadence);
}

function matches(existing: JobSchedulerJson, definition: ScheduleDefinition): boolean {
  const wanted = repeatOptions(definition);
  return (
    Number(existing.every ?? 0) === Number(wanted.every ?? 0) &&
    (existing.pattern ?? undefined) === (wanted.pattern ?? undefined) &&
    (existing.tz ?? undefined) === (wanted.tz ?? undefined)
  );
}

/**
 * Makes the queue's job schedulers exactly the definitions, under a short redlock lock
 * (`<prefix>:schedules:upsert-lock`), so concurrent boots cannot duplicate or drop a scheduler
 * (BullMQ #2988, #3085): the holder reads what exists, upserts only what is missing or changed and,
 * when `removeUnknown`, removes schedulers no definition names. The schedulers of `paused`
 * schedules are removed and never upserted, whatever `removeUnknown` says: a paused schedule's
 * work is not re-created by a runner that starts. A caller that waits for the lock
 * then finds everything in place and changes nothing. The lock is an efficiency measure; the cycle
 * key in PostgreSQL is what keeps a window from running twice.
 */
export async function upsertJobSchedulers(options: {
  queue: Queue<ScheduleJobData>;
  redis: Redis;
  definitions: readonly ScheduleDefinition[];
  logger: Logger;
  removeUnknown: boolean;
  /** Names of the schedules paused now (`schedules.paused_at`); default none. */
  paused?: ReadonlySet<string>;
}): Promise<SchedulerUpsertReport> {
  const { queue } = options;
  const paused = options.paused ?? new Set<string>();
  const definitions = options.definitions.filter((d) => !paused.has(d.name));
  const redlock = new Redlock([options.redis], { retryCount: 100, retryDelay: 100, retryJitter: 50 });
  redlock.on("error", () => undefined);
  const lock = await redlock.acquire([`${queue.opts.prefix}:schedules:upsert-lock`], UPSERT_LOCK_TTL_MS);
  const report: SchedulerUpsertReport = { created: [], updated: [], removed: [] };
  try {
    const existing = new Map((await queue.getJobSchedulers(0, -1)).map((s) => [s.key, s]));
    for (const definition of definitions) {
      const current = existing.get(definition.name);
      if (current && matches(current, definition)) continue;
      await queue.upsertJobScheduler(definition.name, repeatOptions(definition), {
        name: definition.name,
        data: { schedule: definition.name },
        opts: TICK_JOB_OPTIONS,
      });
      (current ? report.updated : report.created).push(definition.name);
    }
    const known = new Set(definitions.map((d) => d.name));
    for (const key of existing.keys()) {
      if (known.has(key) || !(options.removeUnknown || paused.has(key))) continue;
      await queue.removeJobScheduler(key);
      report.removed.push(key);
    }
  } finally {
    await lock.release().catch(() => undefined);
  }
  if (report.created.length + report.updated.length + report.removed.length > 0)
    options.logger.info("job schedulers upserted", { ...report });
  return report;
}

/**
 * Names of defined schedules whose job scheduler is missing (Redis flushed, failed over, or
 * removed), and of `paused` ones whose job scheduler is still there: both need an upsert.
 */
export async function misplacedJobSchedulers(
  queue: Queue<ScheduleJobData>,
  definitions: readonly ScheduleDefinition[],
  paused: ReadonlySet<string>,
): Promise<{ missing: string[]; lingering: string[] }> {
  const missing: string[] = [];
  const lingering: string[] = [];
  for (const definition of definitions) {
    const exists = (await queue.getJobScheduler(definition.name)) !== undefined;
    if (!exists && !paused.has(definition.name)) missing.push(definition.name);
    if (exists && paused.has(definition.name)) lingering.push(definition.name);
  }
  return { missing, lingering };
}
