import { type Job, type JobsOptions, Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { ActivityDispatch, ChildDispatcher } from "../engine/context.js";
import type { Logger } from "../observability/logger.js";
import { type BatchOutcome, TickBatcher } from "../store/tick-batcher.js";
import { activityJobId, activityQueueName, executionJobId, QUEUE_NAMES } from "../transport/queue-names.js";
import { bullmqTelemetry } from "./bullmq-telemetry.js";
import { alignDelayedDueTime } from "./delayed-due-time.js";
import { announceFinished } from "./execution-finished.js";

/** Activity job payload: where its input is journaled, never the input itself. */
export interface ActivityJobData {
  executionId: string;
  position: number;
  activity: string;
}

/** Job payload: only the id. PostgreSQL holds everything else, so Redis never holds workflow data. */
export interface ExecutionJobData {
  executionId: string;
}

/** One job add of the executions queue; its options always carry the job id. */
interface JobAdd {
  name: string;
  data: ExecutionJobData;
  opts: JobsOptions & { jobId: string };
}

/**
 * How long Redis keeps finished jobs: briefly, as PostgreSQL keeps the truth (retention handles
 * it). For executions these are the worker's settings (src/runtime/execution-worker.ts), not each
 * job's: every value of a job hash then fits Redis's compact encoding (64 bytes by default), and a
 * parked execution's job takes less than half the memory (docs/performance.md, W7).
 */
export const FINISHED_JOBS_KEPT = {
  removeOnComplete: { count: 0 },
  removeOnFail: { age: 7 * 24 * 3600 },
} as const;

/** Activity jobs carry the same settings themselves: their workers are configured per queue. */
const ACTIVITY_JOB_OPTIONS: JobsOptions = { attempts: 1, ...FINISHED_JOBS_KEPT };

/**
 * A wake in one round trip. KEYS: waiting-children, wait, meta, active, marker, events, the job's
 * hash, delayed, the readiness stamps; ARGV: job id, now (epoch ms). Answers "missing" (no job),
 * "released" (it left waiting-children for wait, as BullMQ 6's moveParentToWait moves a job
 * without priority or delay, which ours are once parked), "delayed" (the caller promotes it
 * through BullMQ) or "left" (active or waiting: left alone). BullMQ has no API to release a
 * parent before its children finish; the release keeps the pending children linked, so a later
 * park waits for them again. A released or delayed job is ready from now: its stamp says so.
 */
const WAKE = `
if redis.call("EXISTS", KEYS[7]) == 0 then return "missing" end
if redis.call("ZREM", KEYS[1], ARGV[1]) == 1 then
  redis.call("HSET", KEYS[9], ARGV[1], ARGV[2])
  redis.call("RPUSH", KEYS[2], ARGV[1])
  local meta = redis.call("HMGET", KEYS[3], "paused", "concurrency")
  local maxed = meta[2] and redis.call("LLEN", KEYS[4]) >= tonumber(meta[2])
  if not meta[1] and not maxed then redis.call("ZADD", KEYS[5], 0, "0") end
  redis.call("XADD", KEYS[6], "*", "event", "waiting", "jobId", ARGV[1], "prev", "waiting-children")
  return "released"
end
if redis.call("ZSCORE", KEYS[8], ARGV[1]) then
  redis.call("HSET", KEYS[9], ARGV[1], ARGV[2])
  return "delayed"
end
return "left"
`;

/**
 * The hash (under the executions queue's keys) of when each parked job became, or becomes, ready
 * again: BullMQ keeps only a job's creation time, and a promote resets its delay, so neither says
 * how long a woken job waited for a runner (the `tenor_job_wait_seconds` histogram).
 */
const READINESS_STAMPS = "ready-at";

/** The readiness stamps of a queue (by its qualified name); only the executions queue writes them. */
export function readinessStampsKey(queueQualifiedName: string): string {
  return `${queueQualifiedName}:${READINESS_STAMPS}`;
}

/** Reads and clears a job's readiness stamp. KEYS: the stamps; ARGV: job id. */
const TAKE_STAMP = `
local at = redis.call("HGET", KEYS[1], ARGV[1])
if at then redis.call("HDEL", KEYS[1], ARGV[1]) end
return at
`;

/**
 * The producer side of the executions queue: start, wake and child dispatch. A wake only saves
 * time; a lost one is repaired by the sweep, never by trusting Redis
 * (docs/engine.md, "Wake-ups without loss").
 */
export class ExecutionQueue implements ChildDispatcher {
  readonly queue: Queue<ExecutionJobData>;
  private readonly jobAdds = new TickBatcher<JobAdd, void>((adds) => this.addJobs(adds));
  private readonly activityQueues = new Map<string, Queue<ActivityJobData>>();

  constructor(
    private readonly connection: Redis,
    readonly prefix: string,
    private readonly logger: Logger,
  ) {
    this.queue = new Queue<ExecutionJobData>(QUEUE_NAMES.executions, {
      connection,
      prefix,
      ...bullmqTelemetry(),
    });
  }

  /** Adds the execution's job unless it exists; `delayUntil` (epoch ms) parks it as a timer. */
  async enqueue(executionId: string, workflow: string, delayUntil?: number): Promise<void> {
    const delay = delayUntil === undefined ? 0 : Math.max(0, delayUntil - Date.now());
    await this.jobAdds.submit({
      name: workflow,
      data: { executionId },
      opts: { jobId: executionJobId(executionId), ...(delay > 0 ? { delay } : {}) },
    });
  }

  /**
   * Adds a child's job linked to its parent's job, so the parent leaves waiting-children when it
   * finishes. `ignoreDependencyOnFailure` is the failure policy: a child job that fails in Redis
   * can never strand the parent (BullMQ #3362); the parent then reads the child's truth from
   * PostgreSQL. The children a turn dispatches together leave in one pipeline.
   */
  async dispatchChild(child: { id: string; workflow: string }, parentExecutionId: string): Promise<void> {
    await this.jobAdds.submit({
      name: child.workflow,
      data: { executionId: child.id },
      opts: {
        jobId: executionJobId(child.id),
        parent: { id: executionJobId(parentExecutionId), queue: this.queue.qualifiedName },
        ignoreDependencyOnFailure: true,
      },
    });
  }

  /**
   * One pipeline of BullMQ adds for the jobs asked for in one turn of the event loop (starts,
   * children, timers). A job whose add did not come back with its own id (BullMQ answers a missing
   * parent with a negative code inside a pipeline) or a pipeline that failed is added again on
   * its own: adds are idempotent by job id, so nothing is added twice.
   */
  private async addJobs(adds: readonly JobAdd[]): Promise<BatchOutcome<void>[]> {
    const jobs = await this.queue.addBulk([...adds]).catch(() => null);
    return Promise.all(
      adds.map(async (add, i): Promise<BatchOutcome<void>> => {
        if (jobs?.[i]?.id === add.opts.jobId) return { ok: true, value: undefined };
        try {
          await this.addOne(add);
          return { ok: true, value: undefined };
        } catch (error) {
          return { ok: false, error };
        }
      }),
    );
  }

  private async addOne(add: JobAdd): Promise<void> {
    try {
      await this.queue.add(add.name, add.data, add.opts);
    } catch (error) {
      // The parent's job is gone (Redis flushed): run the child unlinked; its completion wakes the parent.
      if (!add.opts.parent || !/Missing key for parent job/.test((error as Error).message)) throw error;
      const { parent: _parent, ...unlinked } = add.opts;
      await this.queue.add(add.name, add.data, unlinked);
    }
  }

  /** See ChildDispatcher.dispatchActivity. */
  async dispatchActivity(
    request: ActivityDispatch,
  ): Promise<{ state: "dispatched" } | { state: "failed"; reason: string }> {
    const queue = this.activityQueue(request.queue);
    const jobId = activityJobId(request.executionId, request.position);
    const existing = await queue.getJob(jobId);
    if (existing && (await existing.getState()) === "failed") {
      const reason = existing.failedReason || "the activity failed";
      await existing.remove().catch(() => undefined);
      return { state: "failed", reason };
    }
    const data: ActivityJobData = {
      executionId: request.executionId,
      position: request.position,
      activity: request.activity,
    };
    const options: JobsOptions = {
      ...ACTIVITY_JOB_OPTIONS,
      jobId,
      parent: { id: executionJobId(request.executionId), queue: this.queue.qualifiedName },
      // The failure policy: a failed activity releases the parent, which reads it and suspends.
      ignoreDependencyOnFailure: true,
    };
    try {
      await queue.add(request.activity, data, options);
    } catch (error) {
      if (!/Missing key for parent job/.test((error as Error).message)) throw error;
      const { parent: _parent, ...unlinked } = options;
      await queue.add(request.activity, data, unlinked);
    }
    return { state: "dispatched" };
  }

  /**
   * True when a child job of `job` failed with its failure left to the parent (an activity, whose
   * failure policy the parent's next turn applies: dispatchActivity reads it and the run suspends)
   * and that failure is still unread: the child sits in its queue's failed set. A failure an
   * earlier turn read has had its job removed, so its stale entry in the parent's list does not
   * count. Keys are `<prefix>:<queue>:<job id>`; job ids hold no colon.
   */
  async hasUnreadChildFailure(job: Job): Promise<boolean> {
    const failures = await job.getIgnoredChildrenFailures();
    for (const key of Object.keys(failures)) {
      const cut = key.lastIndexOf(":");
      if (cut <= 0) continue;
      if ((await this.connection.zscore(`${key.slice(0, cut)}:failed`, key.slice(cut + 1))) !== null)
        return true;
    }
    return false;
  }

  private activityQueue(name: string): Queue<ActivityJobData> {
    let queue = this.activityQueues.get(name);
    if (!queue) {
      queue = new Queue<ActivityJobData>(activityQueueName(name), {
        connection: this.connection,
        prefix: this.prefix,
        ...bullmqTelemetry(),
      });
      this.activityQueues.set(name, queue);
    }
    return queue;
  }

  /**
   * Moves a parked execution to run now, wherever BullMQ holds its job: a delayed job (parked on a
   * timer, or on a child/activity and a deadline) is promoted, a job in waiting-children is moved
   * to wait, a missing one is added again. An active or waiting job is left alone: the turn that
   * parks it looks at PostgreSQL once more after parking (docs/engine.md, "Wake-ups without loss").
   */
  async wake(executionId: string, workflow = "wake"): Promise<void> {
    const jobId = executionJobId(executionId);
    const base = this.queue.qualifiedName;
    const keys = [
      "waiting-children",
      "wait",
      "meta",
      "active",
      "marker",
      "events",
      jobId,
      "delayed",
      READINESS_STAMPS,
    ].map((k) => `${base}:${k}`);
    const found = await this.connection.eval(WAKE, keys.length, ...keys, jobId, String(Date.now()));
    if (found === "missing") {
      await this.enqueue(executionId, workflow);
      return;
    }
    if (found !== "delayed") return;
    await (await this.queue.getJob(jobId))?.promote().catch((error: Error) => {
      // Raced with the timer or another wake: the job already moved, which is what we wanted.
      this.logger.debug("wake found the job no longer delayed", { executionId, error: error.message });
    });
  }

  /**
   * Records that the execution's job is due at `at` (epoch ms): a timer's wake time, a retry's.
   * Written before the job moves to delayed, so the runner that picks it up finds the stamp.
   */
  async stampDue(executionId: string, at: number): Promise<void> {
    await this.connection.hset(this.stampsKey(), executionJobId(executionId), String(at));
  }

  /**
   * Since when (epoch ms) a job a runner just took had been ready, or null when that is not known.
   * A job's first run was ready when it was added (its timestamp plus any start delay); a later
   * run was ready from its stamp (a timer's due time, or the wake that released it). Without a
   * stamp (a job BullMQ released itself, or one taken over after a stall) the moment is unknown:
   * the wait is not guessed. The stamp is consumed, so it never answers for a later run.
   */
  async readySince(job: {
    id?: string | undefined;
    timestamp: number;
    delay: number;
    attemptsStarted: number;
  }): Promise<number | null> {
    if (job.attemptsStarted <= 1) return job.timestamp + job.delay;
    const at = (await this.connection.eval(TAKE_STAMP, 1, this.stampsKey(), job.id ?? "")) as string | null;
    return at === null ? null : Number(at);
  }

  /**
   * After a park until `at`, makes the delayed job's own fields say `at` too, so Bull Board shows
   * the execution's wake time (src/runtime/delayed-due-time.ts). Display only: a failure is logged.
   */
  async alignDueTime(executionId: string, at: number): Promise<void> {
    await alignDelayedDueTime(
      this.connection,
      this.queue.qualifiedName,
      executionJobId(executionId),
      at,
    ).catch((error: Error) =>
      this.logger.debug("could not align a delayed job's due time", { executionId, error: error.message }),
    );
  }

  private stampsKey(): string {
    return readinessStampsKey(this.queue.qualifiedName);
  }

  /**
   * Tells waiting clients (`Prefer: wait`) that the execution's terminal status committed. Best
   * effort: a failure is logged, and a waiter's fallback read answers it.
   */
  async announceFinished(executionId: string): Promise<void> {
    await announceFinished(this.connection, this.prefix, executionId).catch((error: Error) =>
      this.logger.debug("could not announce a finished execution", { executionId, error: error.message }),
    );
  }

  async close(): Promise<void> {
    await Promise.all([...this.activityQueues.values()].map((q) => q.close()));
    await this.queue.close();
  }
}
