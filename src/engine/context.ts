import { randomUUID } from "node:crypto";
import type { z } from "zod";
import type { ActivityDefinition, AnyActivity } from "./activity.js";
import { isActivity } from "./activity.js";
import { type ApprovalOptions, type ApprovalOutcome, waitForApproval } from "./approvals.js";
import { runChild } from "./context-children.js";
import { recordOnce, runActivity, runStep } from "./context-steps.js";
import { runConditionWait, runSignalWait, runSleep } from "./context-waits.js";
import { type Duration, toMilliseconds } from "./duration.js";
import type { ExecutionStore, Fence, JournalEntry, WaitDescriptor } from "./execution-store.js";
import { JournalCursor } from "./journal-cursor.js";
import type { ErrorClass } from "./refusals.js";
import type { RetryPolicy } from "./retry-policy.js";
import type { TurnStop } from "./turn-stop.js";
import type { WorkflowDefinition } from "./workflow.js";

export { childExecutionId } from "./context-children.js";
export type { ErrorClass } from "./refusals.js";

/** What a step function receives. */
export interface StepInfo {
  executionId: string;
  position: number;
  /** 1 for the first attempt in this turn. */
  attempt: number;
}

export interface StepOptions<T> {
  /** Encodes the result into the journal and decodes it on replay (typed values, DESIGN §3). */
  schema?: z.ZodType<T, unknown>;
  /** Immediate retries of transient failures; exhausting them suspends the execution. */
  retry?: RetryPolicy;
  /** Refusals: journaled as the step's outcome and re-raised as the same class on replay. */
  nonRetryable?: readonly ErrorClass[];
}

export type SignalResult<T> = { timedOut: false; payload: T } | { timedOut: true };
export type ConditionResult = { satisfied: true } | { timedOut: true };

export interface WaitDeadline {
  timeout?: Duration;
  deadline?: Date;
}

/** How the status projection shows a signal wait (approvals show as kind "approval" with their parameters). */
export interface WaitPresentation {
  kind: WaitDescriptor["kind"];
  name: string;
  details?: Record<string, unknown>;
}

/** Starts child executions on the transport (BullMQ) with the parent waiting for them. */
export interface ChildDispatcher {
  dispatchChild(child: { id: string; workflow: string }, parentExecutionId: string): Promise<void>;
  /**
   * Adds the activity's job (idempotent by job id) on its queue, as a child of the execution's job.
   * `failed` when that job already ran out of retries: the execution suspends, and the job is
   * removed so the recovery turn dispatches it afresh.
   */
  dispatchActivity(
    request: ActivityDispatch,
  ): Promise<{ state: "dispatched" } | { state: "failed"; reason: string }>;
}

/** One activity step to run on its queue: the worker reads the journaled input from the position. */
export interface ActivityDispatch {
  executionId: string;
  position: number;
  activity: string;
  queue: string;
}

/** Test and instrumentation hooks (metrics: src/observability/engine-metrics.ts). */
export interface EngineHooks {
  /** Runs when a turn is about to begin, before the transport proves it still owns the job. */
  beforeTurn?(info: { executionId: string }): void | Promise<void>;
  /** Runs before a step's work starts (before the fence check a stalled turn makes). */
  beforeStep?(info: { executionId: string; step: string; position: number }): void | Promise<void>;
  /**
   * Runs after a step's work succeeded and before its checkpoint is written; `durationMs` is the
   * step's work, retries included.
   */
  beforeCheckpoint?(info: {
    executionId: string;
    step: string;
    position: number;
    durationMs: number;
  }): void | Promise<void>;
  /** Runs once a turn holds its fence, before the body replays. Must not throw. */
  turnStarted?(info: { executionId: string; workflow: string }): void;
  /** Runs when a turn that held its fence ends (`error`: it threw), with its duration. Must not throw. */
  turnEnded?(info: { executionId: string; workflow: string; outcome: string; durationMs: number }): void;
}

export interface ContextDeps {
  fence: Fence;
  orgId: string;
  journal: readonly JournalEntry[];
  store: ExecutionStore;
  dispatcher: ChildDispatcher;
  hooks: EngineHooks;
  clock: () => number;
  /** Monotonic time (performance.now()) at which the turn's fence was taken. */
  fenceConfirmedAt?: number;
  /**
   * Longest time a turn may go without proving its fence before it starts a step's work; unset:
   * never checked (docs/engine.md, "Fencing"). The runner uses half the BullMQ lock duration.
   */
  staleFenceMs?: number;
  /** True once the transport knows this turn's processing was replaced: the turn stops as fenced. */
  abandoned?: () => boolean;
  /**
   * Dry replay (src/engine/dry-replay.ts): a call beyond the journal stops the turn (as fenced)
   * instead of running new work. Unset in real turns.
   */
  replayOnly?: boolean;
}

/**
 * The durable context of one turn (DESIGN §2.1–2.2). Every call takes the next journal position
 * synchronously, so positions follow call order, also under `Promise.all`. A journaled position
 * returns its recorded value; a new one does the work and writes the result before returning.
 * When the turn must stop (a wait, a suspension, non-determinism, a stale fence) the context
 * closes: the call rejects with a StopSignal and every later call does too.
 */
export class WorkflowContext {
  readonly executionId: string;
  private readonly cursor: JournalCursor;
  private lastProgress: Promise<void> = Promise.resolve();

  constructor(deps: ContextDeps) {
    this.cursor = new JournalCursor(deps);
    this.executionId = deps.fence.executionId;
  }

  /** Why the turn stops, once it must (read by the turn runner). */
  get stop(): TurnStop {
    return this.cursor.stop;
  }

  /** True when this turn journaled or resolved at least one position (it made progress). */
  get madeProgress(): boolean {
    return this.cursor.madeProgress;
  }

  /**
   * Runs `fn` once; its result is journaled before the body continues. Given an activity
   * (defineActivity) instead, runs it as a child job on the activity's own queue and waits.
   */
  step<I, O>(name: string, activity: ActivityDefinition<I, O>, options: { input: I }): Promise<O>;
  step<T>(name: string, fn: (info: StepInfo) => Promise<T> | T, options?: StepOptions<T>): Promise<T>;
  step<T>(
    name: string,
    target: ((info: StepInfo) => Promise<T> | T) | AnyActivity,
    options: StepOptions<T> | { input: unknown } = {},
  ): Promise<T> {
    if (isActivity(target)) {
      return this.cursor.track(
        runActivity<T>(this.cursor, name, target, (options as { input: unknown }).input),
      );
    }
    return this.cursor.track(runStep(this.cursor, name, target, options as StepOptions<T>));
  }

  /** A durable timer: the execution leaves the runner and is woken when it is due. */
  sleep(name: string, duration: Duration): Promise<void> {
    const ms = toMilliseconds(duration);
    return this.cursor.track(runSleep(this.cursor, name, () => this.cursor.deps.clock() + ms));
  }

  sleepUntil(name: string, at: Date): Promise<void> {
    return this.cursor.track(runSleep(this.cursor, name, () => at.getTime()));
  }

  /** Waits for the signal `name`; early signals are kept and consumed in arrival order, once each. */
  waitForSignal<T>(
    name: string,
    options: { schema: z.ZodType<T, unknown>; presentAs?: WaitPresentation } & WaitDeadline,
  ): Promise<SignalResult<T>> {
    return this.cursor.track(runSignalWait(this.cursor, name, options));
  }

  /**
   * Waits for an identity-bound approval (DESIGN §8): M-of-N approvers, bound to the hash of
   * `params`, decided through the API. See approvals.ts.
   */
  waitForApproval(name: string, options: ApprovalOptions): Promise<ApprovalOutcome> {
    return waitForApproval(this, name, options);
  }

  /** Polls `check` durably every `every` until it holds or the deadline passes. */
  waitFor(
    name: string,
    options: { check: () => Promise<boolean> | boolean; every: Duration } & WaitDeadline,
  ): Promise<ConditionResult> {
    return this.cursor.track(runConditionWait(this.cursor, name, options));
  }

  /** Starts a child workflow and returns its typed result, or throws ChildWorkflowError. */
  child<I, O>(workflow: WorkflowDefinition<I, O>, input: I): Promise<O> {
    return this.cursor.track(runChild(this.cursor, workflow, input));
  }

  now(): Promise<Date> {
    const iso = recordOnce(this.cursor, "now", () => new Date(this.cursor.deps.clock()).toISOString());
    return this.cursor.track(iso).then((v) => new Date(v));
  }

  uuid(): Promise<string> {
    return this.cursor.track(recordOnce(this.cursor, "uuid", () => randomUUID()));
  }

  random(): Promise<number> {
    return this.cursor.track(recordOnce(this.cursor, "random", () => Math.random()));
  }

  /**
   * Publishes a progress snapshot to the status projection (only when running new work, not
   * replaying). Resolves at once: the write is ordered after earlier snapshots and drained before
   * the turn ends, but the body never waits for it, so its continuation cannot resume at a moment
   * that depends on the database's timing (docs/engine.md, "Concurrent branches").
   */
  progress(snapshot: Record<string, unknown>): Promise<void> {
    if (this.cursor.stop.closed || this.cursor.replaying) return Promise.resolve();
    const { store, fence } = this.cursor.deps;
    // One write after the other: concurrent writes on different pool connections can commit out
    // of order and leave an older snapshot in the projection.
    const written = this.cursor.track(
      this.lastProgress.then(() => this.cursor.write("progress", () => store.setProgress(fence, snapshot))),
    );
    this.lastProgress = written.catch(() => undefined);
    return Promise.resolve();
  }

  /** Waits until no call is in flight, so every finished step is journaled before the turn ends. */
  drain(): Promise<void> {
    return this.cursor.drain();
  }
}
