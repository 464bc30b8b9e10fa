import { type Job, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { z } from "zod";
import type { ActivityRegistry, AnyActivity } from "../engine/activity.js";
import { unstorableResult } from "../engine/errors.js";
import { retryTransient } from "../engine/journal-cursor.js";
import { isRefusal, refusalRecord } from "../engine/refusals.js";
import { backoffDelayMs, resolveRetryPolicy } from "../engine/retry-policy.js";
import { ServiceSet, serviceLookup } from "../engine/services.js";
import type { Logger } from "../observability/logger.js";
import type { TenorMetrics } from "../observability/metrics.js";
import type { PgActivityStore } from "../store/pg-activity-store.js";
import { activityQueueName } from "../transport/queue-names.js";
import { DEFAULT_MAX_STORED_VALUE_BYTES } from "../values/storable.js";
import { bullmqTelemetry } from "./bullmq-telemetry.js";
import type { ActivityJobData } from "./execution-queue.js";
import type { ExecutionTracing } from "./execution-tracing.js";

export interface ActivityWorkerOptions {
  connection: Redis;
  prefix: string;
  registry: ActivityRegistry;
  /** What the activities reach outside the journal, each only what it declared; none when unset. */
  services?: ServiceSet;
  store: PgActivityStore;
  logger: Logger;
  lockDurationMs: number;
  stalledIntervalMs: number;
  /**
   * Wakes the parent execution once the position has its outcome. Its job may sit in delayed (a
   * deadline raced the activity), where BullMQ's parent release never reaches it. A failed wake is
   * logged; the sweep repairs it within one sweep interval (docs/engine.md, "Wake-ups without loss").
   */
  wake?: (executionId: string) => Promise<void>;
  /** Runs each activity job inside its execution's trace (only when this process traces). */
  tracing?: Pick<ExecutionTracing, "runActivity">;
  /** Largest stored result, in bytes of its JSON (`durable.maxStoredValueBytes`). */
  maxStoredValueBytes?: number;
  /** Activity durations by declared name and the jobs' wait before pickup, by queue. */
  metrics?: Pick<TenorMetrics, "activityDuration" | "jobWait">;
}

/**
 * One BullMQ worker per activity queue, with that queue's concurrency and rate limit. A job runs
 * its activity with the activity's retry policy and journals the outcome into the pending
 * position; transient failures past the policy fail the job, which releases the parent (its
 * failure policy) to suspend the execution.
 */
export function startActivityWorkers(options: ActivityWorkerOptions): Worker<ActivityJobData>[] {
  // Zero series: every declared activity and queue is on /metrics before its first job.
  for (const name of options.registry.names()) options.metrics?.activityDuration.zero({ activity: name });
  for (const { options: queue } of options.registry.queues())
    options.metrics?.jobWait.zero({ queue: activityQueueName(queue.name) });
  return options.registry.queues().map(({ options: queue }) => {
    const worker = new Worker<ActivityJobData>(
      activityQueueName(queue.name),
      (job) => runAndWake(job, options),
      {
        connection: options.connection,
        prefix: options.prefix,
        concurrency: queue.concurrency ?? 1,
        ...(queue.limiter ? { limiter: { max: queue.limiter.max, duration: queue.limiter.durationMs } } : {}),
        lockDuration: options.lockDurationMs,
        stalledInterval: options.stalledIntervalMs,
        // The pending position makes a second run harmless: only the first outcome is recorded.
        maxStalledCount: Number.MAX_SAFE_INTEGER,
        ...bullmqTelemetry(),
      },
    );
    worker.on("error", (error) =>
      options.logger.warn("activity worker error", { queue: queue.name, error: error.message }),
    );
    worker.on("failed", (job) => {
      if (job) void wakeParent(job.data.executionId, options);
    });
    return worker;
  });
}

/**
 * Wakes the parent after a run that found the position resolved: now, or by an earlier run that
 * died before waking. A job that fails wakes from the worker's `failed` event, once BullMQ has
 * recorded the failure the parent's next turn reads.
 */
async function runAndWake(job: Job<ActivityJobData>, options: ActivityWorkerOptions): Promise<void> {
  // An activity job is added once and never re-delayed: ready at its timestamp plus its delay.
  const readyAt = job.timestamp + (job.opts.delay ?? 0);
  options.metrics?.jobWait.observe({ queue: job.queueName }, Math.max(0, Date.now() - readyAt) / 1000);
  const started = performance.now();
  const run = () => runActivityJob(job, options);
  try {
    await (options.tracing ? options.tracing.runActivity(job.data, run) : run());
  } finally {
    options.metrics?.activityDuration.observe(
      { activity: job.data.activity },
      (performance.now() - started) / 1000,
    );
  }
  await wakeParent(job.data.executionId, options);
}

async function wakeParent(executionId: string, options: ActivityWorkerOptions): Promise<void> {
  await options
    .wake?.(executionId)
    .catch((error: Error) =>
      options.logger.warn("could not wake the parent of an activity", { executionId, error: error.message }),
    );
}

async function runActivityJob(job: Job<ActivityJobData>, options: ActivityWorkerOptions): Promise<void> {
  const { executionId, position } = job.data;
  const activity = options.registry.get(job.data.activity);
  const pending = await options.store.pendingInput(executionId, position);
  if (!pending) return; // Already resolved by an earlier run of this job.
  const input = activity.input.parse(pending.input);
  const policy = resolveRetryPolicy(activity.retry);
  const services = serviceLookup("activity", activity, options.services ?? ServiceSet.empty);
  for (let attempt = 1; ; attempt++) {
    let output: unknown;
    try {
      output = await activity.run(input, { executionId, position, attempt, ...services });
    } catch (error) {
      if (isRefusal(error, activity.nonRetryable)) {
        const record = refusalRecord(error);
        await retryTransient(() =>
          options.store.resolve(executionId, position, { state: "error", error: record, attempts: attempt }),
        );
        return;
      }
      if (attempt >= policy.attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, backoffDelayMs(policy, attempt)));
      continue;
    }
    const result = encodeOutput(activity, output);
    // The same boundary as an inline step's (src/engine/errors.ts, unstorableResult).
    const maxBytes = options.maxStoredValueBytes ?? DEFAULT_MAX_STORED_VALUE_BYTES;
    const refusal = unstorableResult(pending.step, position, result, maxBytes);
    const outcome = refusal
      ? { state: "error" as const, error: refusalRecord(refusal), attempts: attempt }
      : { state: "ok" as const, result, attempts: attempt };
    // Retried on a transient error: the write, never the activity (src/engine/journal-cursor.ts).
    await retryTransient(() => options.store.resolve(executionId, position, outcome));
    return;
  }
}

function encodeOutput(activity: AnyActivity, output: unknown): unknown {
  const encoded = z.encode(activity.output, output);
  return encoded === undefined ? null : encoded;
}
