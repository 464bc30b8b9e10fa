import { DelayedError, type Job, WaitingChildrenError, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { ExecutionStore } from "../engine/execution-store.js";
import type { TurnOutcome, TurnRunner } from "../engine/turn-runner.js";
import type { Logger } from "../observability/logger.js";
import type { PgWaitProbe } from "../store/pg-wait-probe.js";
import type { ExecutionJobData, ExecutionQueue } from "./execution-queue.js";
import { QUEUE_NAMES } from "./queue-names.js";

export interface ExecutionWorkerOptions {
  connection: Redis;
  prefix: string;
  turns: TurnRunner;
  store: ExecutionStore;
  queue: ExecutionQueue;
  logger: Logger;
  concurrency: number;
  /** BullMQ lock TTL: a dead runner's jobs are taken over after about lockDuration + stalledInterval. */
  lockDurationMs: number;
  stalledIntervalMs: number;
  /**
   * Called when a turn finds the execution terminal (it just finished, or it already had): a
   * keyed workflow's slot goes to the next execution of its key (src/keyed). `jobName` is the
   * workflow name when the job was added by name. A failure is logged; the keyed repair retries.
   */
  onTerminal?: (executionId: string, jobName: string) => Promise<void>;
  /**
   * Reads whether a just-parked wait can already be satisfied: a wake-up committed while the turn
   * ran found the job active and was lost. Unset: only signal waits are re-checked.
   */
  waits?: Pick<PgWaitProbe, "satisfiable">;
}

/** Longest single park; a waiting execution past it just re-checks (cheap) and parks again. */
const MAX_PARK_MS = 24 * 3600 * 1000;
/** Re-check period when PostgreSQL says a child is running but BullMQ lost the parent link. */
const CHILD_POLL_MS = 2_000;
/** Delay before retrying a turn that failed on infrastructure (PostgreSQL unreachable). */
const INFRA_RETRY_MS = 1_000;
/** Immediate re-runs within one job (a wait that was satisfied while parking). */
const MAX_ROUNDS = 5;

/**
 * The runner's BullMQ worker: each job advances one execution by turns and maps each outcome to
 * a job move (DESIGN §2.4): a timer to delayed, a child to waiting-children, a finish to completed.
 */
export function startExecutionWorker(options: ExecutionWorkerOptions): Worker<ExecutionJobData> {
  const { logger } = options;
  const worker = new Worker<ExecutionJobData>(
    QUEUE_NAMES.executions,
    (job, token) => processExecutionJob(job, token as string, options),
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      // PostgreSQL fencing makes a re-run safe; BullMQ must never give up on a stalled execution.
      maxStalledCount: Number.MAX_SAFE_INTEGER,
      autorun: true,
    },
  );
  worker.on("error", (error) => logger.warn("worker error", { error: error.message }));
  return worker;
}

async function processExecutionJob(
  job: Job<ExecutionJobData>,
  token: string,
  options: ExecutionWorkerOptions,
): Promise<void> {
  const { executionId } = job.data;
  const log = options.logger.child({ executionId, jobId: job.id ?? executionId });
  for (let round = 0; round < MAX_ROUNDS; round++) {
    let outcome: TurnOutcome;
    try {
      outcome = await options.turns.run(executionId);
    } catch (error) {
      log.warn("turn failed on infrastructure; retrying later", { error: (error as Error).message });
      await job.moveToDelayed(Date.now() + INFRA_RETRY_MS, token);
      throw new DelayedError();
    }
    switch (outcome.kind) {
      case "gone": {
        await notifyTerminal(options, executionId, job.name, log);
        // The run that finished it may have died before ringing its parent: ring it here.
        const parentId = (await options.store.getSummary(executionId))?.parentId;
        if (parentId) await wakeParent(options, parentId, log);
        return;
      }
      case "completed":
      case "failed":
        await notifyTerminal(options, executionId, job.name, log);
        if (outcome.parentId) await wakeParent(options, outcome.parentId, log);
        return;
      case "fenced":
        // Another runner took this execution over (our lock expired); it owns the job now.
        log.info("turn fenced: another runner advanced this execution");
        throw new DelayedError();
      case "parked": {
        if (outcome.waitsForChild && outcome.wakeAt === null) {
          if (await job.moveToWaitingChildren(token)) {
            await recheckParkedWait(options, executionId, outcome, log);
            throw new WaitingChildrenError();
          }
          // BullMQ sees no pending child: they finished, or Redis lost the link. Re-run to read PostgreSQL.
          if (round < MAX_ROUNDS - 1) continue;
          await job.moveToDelayed(Date.now() + CHILD_POLL_MS, token);
          throw new DelayedError();
        }
        const until = Math.min(outcome.wakeAt ?? Number.POSITIVE_INFINITY, Date.now() + MAX_PARK_MS);
        if (until <= Date.now()) continue;
        await job.moveToDelayed(until, token);
        await recheckParkedWait(options, executionId, outcome, log);
        throw new DelayedError();
      }
      case "suspended":
      case "held":
        await job.moveToDelayed(outcome.wakeAt, token);
        throw new DelayedError();
    }
  }
  await job.moveToDelayed(Date.now() + CHILD_POLL_MS, token);
  throw new DelayedError();
}

/**
 * Lost-wake-up guard: a wake-up committed while this turn ran found the job active and did not
 * move it. Now that the job is parked, PostgreSQL is read once more and the job rung if its wait
 * can be satisfied (docs/engine.md, "Wake-ups"). A wake-up committed after this read finds the
 * job parked and moves it itself. A park on timers alone has nothing to re-check and costs no
 * query (a cancellation requested meanwhile is rung by the sweep: wakeCancelRequested).
 */
async function recheckParkedWait(
  options: ExecutionWorkerOptions,
  executionId: string,
  park: { signalNames: string[]; waitsForChild: boolean },
  log: Logger,
): Promise<void> {
  const { signalNames, waitsForChild } = park;
  if (signalNames.length === 0 && !waitsForChild) return;
  try {
    const satisfiable = options.waits
      ? await options.waits.satisfiable(executionId)
      : signalNames.length > 0 && (await options.store.hasUnconsumedSignal(executionId, signalNames));
    if (satisfiable) await options.queue.wake(executionId);
  } catch (error) {
    // The sweep repairs it within one interval.
    log.warn("could not re-check a parked wait", { error: (error as Error).message });
  }
}

async function wakeParent(options: ExecutionWorkerOptions, parentId: string, log: Logger): Promise<void> {
  // BullMQ releases a linked parent when this job completes; an unlinked one (after a Redis loss)
  // or one parked on a timer as well needs the doorbell.
  await options.queue
    .wake(parentId)
    .catch((error: Error) => log.warn("could not wake parent", { parentId, error: error.message }));
}

async function notifyTerminal(
  options: ExecutionWorkerOptions,
  executionId: string,
  jobName: string,
  log: Logger,
): Promise<void> {
  if (!options.onTerminal) return;
  await options
    .onTerminal(executionId, jobName)
    .catch((error: Error) =>
      log.warn("terminal hook failed; the keyed repair retries", { error: error.message }),
    );
}
