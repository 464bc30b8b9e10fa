import { Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Pool } from "pg";
import type { Logger } from "../observability/logger.js";
import { QUEUE_NAMES } from "../transport/queue-names.js";
import { startRepeatingTask } from "../transport/repeating-task.js";
import { cadencePeriodMs, type ScheduleDefinition } from "./schedule-definition.js";
import { runScheduleTick, tickDueAt } from "./schedule-tick.js";
import { misplacedJobSchedulers, type ScheduleJobData, upsertJobSchedulers } from "./scheduler-upsert.js";
import { pausedScheduleNames } from "./store/pg-schedule-control.js";
import { upsertSchedules } from "./store/pg-schedule-runs.js";

export interface ScheduleServiceOptions {
  definitions: readonly ScheduleDefinition[];
  pool: Pool;
  /** Producer connection: the queue and the upsert lock. */
  redis: Redis;
  /** A connection with `maxRetriesPerRequest: null` for the worker. */
  workerRedis: Redis;
  prefix: string;
  logger: Logger;
  /** Identifies this runner on the runs it records. */
  runnerId: string;
  lockDurationMs: number;
  stalledIntervalMs: number;
  /**
   * How often each runner checks that every job scheduler still exists and restores missing ones
   * (Redis flushed or failed over), and that paused schedules have none (a pause or resume takes
   * effect on the job schedulers within this), in milliseconds. Default: the fastest cadence,
   * within 1–5 s.
   */
  keeperIntervalMs?: number;
}

export interface ScheduleService {
  queue: Queue<ScheduleJobData>;
  stop(): Promise<void>;
}

/**
 * The runners' schedules (docs/schedules.md, "How a schedule runs"): records the definitions in
 * `schedules`, upserts their BullMQ job schedulers under the redlock lock (none for a paused
 * schedule), and runs a worker that executes each tick through the cycle key, an operator's
 * trigger included. Runners only: the api and indexer never start this.
 */
export async function startScheduleService(options: ScheduleServiceOptions): Promise<ScheduleService> {
  const log = options.logger.child({ component: "schedules", queue: QUEUE_NAMES.schedules });
  const byName = new Map(options.definitions.map((d) => [d.name, d]));
  await registerSchedules(options.pool, options.definitions);
  const queue = new Queue<ScheduleJobData>(QUEUE_NAMES.schedules, {
    connection: options.redis,
    prefix: options.prefix,
  });
  const upsert = (removeUnknown: boolean, paused: ReadonlySet<string>) =>
    upsertJobSchedulers({
      queue,
      redis: options.redis,
      definitions: options.definitions,
      logger: log,
      removeUnknown,
      paused,
    });
  await upsert(true, await pausedScheduleNames(options.pool));
  // The lease is the BullMQ lock: a tick re-delivered after its runner died finds it expired.
  const tickDeps = {
    pool: options.pool,
    logger: log,
    runnerId: options.runnerId,
    leaseMs: options.lockDurationMs,
  };
  const worker = new Worker<ScheduleJobData>(
    QUEUE_NAMES.schedules,
    async (job) => {
      const definition = byName.get(job.data.schedule ?? job.name);
      if (!definition) throw new Error(`no schedule named ${job.data.schedule ?? job.name} on this runner`);
      const { trigger } = job.data;
      if (trigger) {
        log.info("running a tick an operator asked for", { schedule: definition.name, by: trigger.by });
        return runScheduleTick(tickDeps, definition, new Date(trigger.requestedAt), { by: trigger.by });
      }
      return runScheduleTick(tickDeps, definition, tickDueAt(job));
    },
    {
      connection: options.workerRedis,
      prefix: options.prefix,
      // One slot per schedule: a long retention pass never delays the sweep.
      concurrency: Math.max(1, options.definitions.length),
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      maxStalledCount: 1,
    },
  );
  worker.on("error", (error) => log.warn("schedule worker error", { error: error.message }));
  const keeper = startKeeper(options, queue, upsert, log);
  return {
    queue,
    async stop() {
      await keeper.stop();
      await worker.close();
      await queue.close();
    },
  };
}

/**
 * Restores job schedulers that vanished from Redis, and removes those of schedules paused since
 * (a resume restores them); PostgreSQL's cycle keys make a restore harmless.
 */
function startKeeper(
  options: ScheduleServiceOptions,
  queue: Queue<ScheduleJobData>,
  upsert: (removeUnknown: boolean, paused: ReadonlySet<string>) => Promise<unknown>,
  log: Logger,
): { stop(): Promise<void> } {
  const fastest = Math.min(...options.definitions.map((d) => cadencePeriodMs(d.cadence)));
  const interval = options.keeperIntervalMs ?? Math.min(5_000, Math.max(1_000, fastest));
  return startRepeatingTask(
    interval,
    async () => {
      const paused = await pausedScheduleNames(options.pool);
      const { missing, lingering } = await misplacedJobSchedulers(queue, options.definitions, paused);
      if (missing.length === 0 && lingering.length === 0) return;
      if (lingering.length > 0) log.info("schedules paused; removing their job schedulers", { lingering });
      if (missing.length > 0) log.warn("job schedulers missing from Redis; restoring them", { missing });
      await upsert(false, paused);
    },
    (error) => log.warn("job scheduler check failed", { error: error.message }),
  );
}

/**
 * Records (or updates the cadence of) every schedule this runner defines, so status can see them
 * and the api can say when each runs next and how often, in words.
 */
export function registerSchedules(pool: Pool, definitions: readonly ScheduleDefinition[]): Promise<void> {
  return upsertSchedules(
    pool,
    definitions.map((d) => ({
      name: d.name,
      cadenceMs: cadencePeriodMs(d.cadence),
      cadence: { ...d.cadence },
    })),
  );
}
