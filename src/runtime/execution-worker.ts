import { DelayedError, type Job, WaitingChildrenError, Worker, type WorkerOptions } from "bullmq";
import type { Redis } from "ioredis";
import type { ExecutionStore } from "../engine/execution-store.js";
import type { TurnOutcome, TurnRunner } from "../engine/turn-runner.js";
import type { Logger } from "../observability/logger.js";
import type { TenorMetrics } from "../observability/metrics.js";
import type { PgWaitProbe } from "../store/pg-wait-probe.js";
import { QUEUE_NAMES } from "../transport/queue-names.js";
import { bullmqTelemetry } from "./bullmq-telemetry.js";
import { type ExecutionJobData, type ExecutionQueue, FINISHED_JOBS_KEPT } from "./execution-queue.js";
import type { ExecutionTracing } from "./execution-tracing.js";
import { failureClass } from "./failure-class.js";
import { JobLease } from "./job-lease.js";

export interface ExecutionWorkerOptions {
  connection: Redis;
  prefix: string;
  turns: TurnRunner;
  store: ExecutionStore;
  queue: ExecutionQueue;
  logger: Logger;
  concurrency: number;
  /** This runner's name, stored on every job it takes (BullMQ `processedBy`), so a takeover names it. */
  runnerId?: string;
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
   * ran found the job active and was lost.
   */
  waits: Pick<PgWaitProbe, "satisfiable">;
  /** Runs each turn inside its execution's trace (only when this process traces). */
  tracing?: Pick<ExecutionTracing, "runTurn">;
  /** Counts failed executions by workflow and failure class; times each job's wait for a runner. */
  metrics?: Pick<TenorMetrics, "executionFailures" | "jobWait">;
}

/** Longest single park; a waiting execution past it just re-checks (cheap) and parks again. */
const MAX_PARK_MS = 24 * 3600 * 1000;
/**
 * Re-check period when BullMQ sees no pending child and PostgreSQL says the wait is over, yet
 * MAX_ROUNDS turns in a row did not get past it (or PostgreSQL could not be read).
 */
const CHILD_POLL_MS = 2_000;
/** Delay before retrying a turn that failed on infrastructure (PostgreSQL unreachable). */
const INFRA_RETRY_MS = 1_000;
/** Immediate re-runs within one job (a wait that was satisfied while parking). */
const MAX_ROUNDS = 5;

/**
 * The runner's BullMQ worker: each job advances one execution by turns and maps each outcome to
 * a job move (docs/engine.md, "An execution, a job, a turn"): a timer to delayed, a child to
 * waiting-children, a finish to completed.
 */
/** The executions worker, with the count a runner's heartbeat reports (docs/ownership.md, "Who is alive"). */
export interface ExecutionWorker extends Worker<ExecutionJobData> {
  /** Jobs this process is processing now: turns in progress, at most the worker's concurrency. */
  readonly jobsInProgress: number;
}

export function startExecutionWorker(options: ExecutionWorkerOptions): ExecutionWorker {
  const { logger } = options;
  const worker = new SingleProcessingWorker(
    QUEUE_NAMES.executions,
    (job, token, abandoned) => processExecutionJob(job, token as string, options, abandoned),
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      ...(options.runnerId ? { name: options.runnerId } : {}),
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      // PostgreSQL fencing makes a re-run safe; BullMQ must never give up on a stalled execution.
      maxStalledCount: Number.MAX_SAFE_INTEGER,
      ...FINISHED_JOBS_KEPT,
      autorun: true,
      ...bullmqTelemetry(),
    },
    logger,
  );
  worker.on("error", (error) => logger.warn("worker error", { error: error.message }));
  return worker;
}

type Processor = (job: Job<ExecutionJobData>, token: string, abandoned: () => boolean) => Promise<void>;

/**
 * One processing per job in this process. BullMQ's lock manager tracks renewals by job id: when
 * a process ends up processing a job a second time (it stalled, lost the lock, and fetched the
 * job again after resuming, or Redis lost the job and the sweep added it again), the first
 * processing's end stops the renewal of the second's lock, which then expires silently and the
 * job is handed out once more while the second still runs. So a new processing of a job tells
 * the older one it was abandoned (its turn stops at its next journal call; its writes are fenced
 * by the new turn anyway), and when the older one has ended, puts its own lock back under renewal.
 */
class SingleProcessingWorker extends Worker<ExecutionJobData> implements ExecutionWorker {
  private readonly processing = new Map<string, { done: Promise<unknown>; abandon(): void }>();
  /** `jobId/token` of processings a newer processing of the same job replaced. */
  private readonly abandoned = new Set<string>();

  constructor(
    name: string,
    processor: Processor,
    options: WorkerOptions,
    private readonly log: Logger,
  ) {
    super(name, (job, token) => processor(job, token as string, () => this.isAbandoned(job, token)), options);
  }

  get jobsInProgress(): number {
    return this.processing.size;
  }

  private isAbandoned(job: Job, token: string | undefined): boolean {
    return this.abandoned.has(`${job.id}/${token}`);
  }

  override async processJob(
    job: Job<ExecutionJobData>,
    token: string,
    fetchNextCallback?: () => boolean,
  ): ReturnType<Worker<ExecutionJobData>["processJob"]> {
    const id = job.id as string;
    const older = this.processing.get(id);
    if (older) {
      this.log.warn("job handed to this runner again while an older processing runs; abandoning the older", {
        jobId: id,
      });
      older.abandon();
    }
    const abandonKey = `${id}/${token}`;
    const done = super.processJob(job, token, fetchNextCallback);
    const entry = { done, abandon: () => this.abandoned.add(abandonKey) };
    this.processing.set(id, entry);
    if (older) {
      // The older processing's end untracks the job id; track this processing's lock again.
      void older.done.finally(() => {
        if (this.processing.get(id) === entry) this.lockManager.trackJob(id, token, Date.now());
      });
    }
    try {
      return await done;
    } finally {
      this.abandoned.delete(abandonKey);
      if (this.processing.get(id) === entry) this.processing.delete(id);
    }
  }
}

async function processExecutionJob(
  job: Job<ExecutionJobData>,
  token: string,
  options: ExecutionWorkerOptions,
  abandoned: () => boolean,
): Promise<void> {
  const { executionId } = job.data;
  const log = options.logger.child({ executionId, jobId: job.id ?? executionId });
  observeJobWait(job, options, log);
  const lease = new JobLease(job, token, options.lockDurationMs);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    let outcome: TurnOutcome;
    try {
      // A processing that lost its lock (it was stopped or stalled past the lock window) must not
      // take a turn: that would fence out the runner that owns the job now.
      const turn = () => options.turns.run(executionId, { abandoned, beforeFence: () => lease.held() });
      outcome = options.tracing ? await options.tracing.runTurn(executionId, turn) : await turn();
    } catch (error) {
      log.warn("turn failed on infrastructure; retrying later", { error: (error as Error).message });
      await parkUntilDue(job, token, Date.now() + INFRA_RETRY_MS, options);
      throw new DelayedError();
    }
    switch (outcome.kind) {
      case "gone": {
        // Announced again: the run that finished it may have died before announcing it.
        void options.queue.announceFinished(executionId);
        await notifyTerminal(options, executionId, job.name, log);
        // The run that finished it may have died before waking its parent: wake it here.
        const parentId = (await options.store.getSummary(executionId))?.parentId;
        if (parentId) await wakeParent(options, parentId, log);
        return;
      }
      case "failed":
        // At info: a failed run is an outcome an operator looks for, not a fault of the runner.
        log.info("execution failed", {
          workflow: job.name,
          code: outcome.failure.code,
          class: failureClass(outcome.failure),
          retryable: outcome.failure.retryable,
        });
        options.metrics?.executionFailures.inc({ workflow: job.name, class: failureClass(outcome.failure) });
        void options.queue.announceFinished(executionId);
        await notifyTerminal(options, executionId, job.name, log);
        if (outcome.parentId) await wakeParent(options, outcome.parentId, log);
        return;
      case "completed":
        // Not awaited: a waiting client needs no ordering with the job's own finish.
        void options.queue.announceFinished(executionId);
        await notifyTerminal(options, executionId, job.name, log);
        if (outcome.parentId) await wakeParent(options, outcome.parentId, log);
        return;
      case "fenced":
        // A newer turn began. If this processing still holds the job's lock, that turn belongs to
        // a stale runner (stopped past its lock, then resumed): take the execution back at once.
        if (!abandoned() && (await lease.held({ force: true }))) {
          log.info("turn fenced by a runner that no longer holds the job; starting a new turn");
          continue;
        }
        log.info("turn fenced: another runner advanced this execution");
        throw new DelayedError();
      case "parked": {
        if (outcome.waitsForChild && outcome.wakeAt === null) {
          if (await job.moveToWaitingChildren(token)) {
            await recheckParkedWait(options, executionId, outcome, log);
            throw new WaitingChildrenError();
          }
          // BullMQ sees no pending child: they finished, or Redis lost the link (a flush, after
          // which the sweep added this job back alone). PostgreSQL decides: a finished child's
          // outcome is for a new turn now; a child still running wakes this parent when it
          // finishes (wakeParent), so park until then instead of re-running turns while it works.
          // An activity whose job failed while this turn ran released no one (the job was
          // active) and left nothing in PostgreSQL; its failure is BullMQ's to tell. Without
          // this look the run parked for MAX_PARK_MS instead of suspending.
          if (
            (await mayBeOver(
              () => options.waits.satisfiable(executionId),
              "whether a parked child wait is over",
              log,
            )) ||
            (await mayBeOver(
              () => options.queue.hasUnreadChildFailure(job),
              "whether a child job failed",
              log,
            ))
          ) {
            if (round < MAX_ROUNDS - 1) continue;
            await parkUntilDue(job, token, Date.now() + CHILD_POLL_MS, options);
            throw new DelayedError();
          }
          await parkUntil(job, token, Date.now() + MAX_PARK_MS, options);
          await recheckParkedWait(options, executionId, outcome, log);
          throw new DelayedError();
        }
        const recheckAt = Date.now() + MAX_PARK_MS;
        const until = Math.min(outcome.wakeAt ?? Number.POSITIVE_INFINITY, recheckAt);
        if (until <= Date.now()) continue;
        // A timer is due at its wake time; a long park's re-check is not a wait for a runner.
        if (until < recheckAt) await parkUntilDue(job, token, until, options);
        else await parkUntil(job, token, until, options);
        await recheckParkedWait(options, executionId, outcome, log);
        throw new DelayedError();
      }
      case "suspended":
      case "held":
        await parkUntilDue(job, token, outcome.wakeAt, options);
        throw new DelayedError();
    }
  }
  await parkUntilDue(job, token, Date.now() + CHILD_POLL_MS, options);
  throw new DelayedError();
}

/**
 * Moves the job to delayed until `at`, stamped as due then (src/runtime/execution-queue.ts): the
 * runner that takes it afterwards times its wait from that moment. The stamp goes first, so a
 * job due at once cannot be taken before it; a failed stamp only costs that one observation.
 */
async function parkUntilDue(
  job: Job<ExecutionJobData>,
  token: string,
  at: number,
  options: ExecutionWorkerOptions,
): Promise<void> {
  if (options.metrics) await options.queue.stampDue(job.data.executionId, at).catch(() => undefined);
  await parkUntil(job, token, at, options);
}

/**
 * Moves the job to delayed until `at`, and has its fields say `at` as well: BullMQ counts a
 * moved job's delay from the move, Bull Board from the job's creation (src/runtime/delayed-due-time.ts).
 */
async function parkUntil(
  job: Job<ExecutionJobData>,
  token: string,
  at: number,
  options: ExecutionWorkerOptions,
): Promise<void> {
  await job.moveToDelayed(at, token);
  await options.queue.alignDueTime(job.data.executionId, at);
}

/**
 * Observes how long the job waited for a runner, off the turn's path: reading a woken job's
 * stamp is a Redis round trip the turn need not wait for.
 */
function observeJobWait(job: Job<ExecutionJobData>, options: ExecutionWorkerOptions, log: Logger): void {
  const jobWait = options.metrics?.jobWait;
  if (!jobWait) return;
  const takenAt = Date.now();
  options.queue.readySince(job).then(
    (readyAt) => {
      if (readyAt !== null)
        jobWait.observe({ queue: QUEUE_NAMES.executions }, Math.max(0, takenAt - readyAt) / 1000);
    },
    (error: Error) => log.debug("could not read when the job became ready", { error: error.message }),
  );
}

/**
 * One answer about a parked wait BullMQ holds no child for (`what` names it in the log): may the
 * wait be over? An unreadable answer counts as yes: the caller then re-runs or polls as it would
 * without the probe, never parking on a wait that may be over.
 */
async function mayBeOver(read: () => Promise<boolean>, what: string, log: Logger): Promise<boolean> {
  try {
    return await read();
  } catch (error) {
    log.warn(`could not read ${what}`, { error: (error as Error).message });
    return true;
  }
}

/**
 * Lost-wake-up guard: a wake-up committed while this turn ran found the job active and did not
 * move it. Now that the job is parked, PostgreSQL is read once more and the job woken if its wait
 * can be satisfied (docs/engine.md, "Wake-ups without loss"). A wake-up committed after this read
 * finds the job parked and moves it itself; a park on a pause is re-checked the same way (an unpause
 * committed while the turn ran). A park on timers alone has nothing to re-check and costs
 * no query (a cancellation requested meanwhile is woken by the sweep: wakeCancelRequested).
 */
async function recheckParkedWait(
  options: ExecutionWorkerOptions,
  executionId: string,
  park: { signalNames: string[]; waitsForChild: boolean; paused?: boolean },
  log: Logger,
): Promise<void> {
  const { signalNames, waitsForChild, paused } = park;
  if (signalNames.length === 0 && !waitsForChild && paused !== true) return;
  try {
    if (await options.waits.satisfiable(executionId)) await options.queue.wake(executionId);
  } catch (error) {
    // The sweep repairs it within one interval.
    log.warn("could not re-check a parked wait", { error: (error as Error).message });
  }
}

async function wakeParent(options: ExecutionWorkerOptions, parentId: string, log: Logger): Promise<void> {
  // BullMQ releases a linked parent when this job completes; an unlinked one (after a Redis loss)
  // or one parked on a timer as well needs the wake.
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
