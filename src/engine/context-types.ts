import type { z } from "zod";
import type { Duration } from "./duration.js";
import type { ExecutionStore, Fence, JournalEntry, WaitDescriptor } from "./execution-store.js";
import type { ErrorClass } from "./refusals.js";
import type { RetryPolicy } from "./retry-policy.js";
import type { ServiceLookup } from "./services.js";

/**
 * The types the workflow context's modules share (context.ts, journal-cursor.ts and the
 * context-* modules): kept apart so those modules form a tree instead of importing each other.
 */

/** What a step function receives. */
export interface StepInfo {
  executionId: string;
  position: number;
  /** 1 for the first attempt in this turn. */
  attempt: number;
}

export interface StepOptions<T> {
  /** Encodes the result into the journal and decodes it on replay (typed values: docs/values.md). */
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

/** Test and instrumentation hooks (metrics: src/runtime/engine-metrics.ts). */
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
  /**
   * Runs after a child's row exists and before its job is added (the window a crash between the
   * two leaves open, repaired by takeover and the sweep).
   */
  beforeChildDispatch?(info: {
    executionId: string;
    childId: string;
    position: number;
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
  /**
   * The services the workflow declared, over the runner's ServiceSet (src/engine/services.ts);
   * unset: the body may use none.
   */
  services?: ServiceLookup;
  /** See TurnStart.afterCleanPark: children dispatched by earlier turns are not dispatched again. */
  afterCleanPark?: boolean;
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
  /**
   * Largest value, in bytes of its JSON, the turn hands to storage (`durable.maxStoredValueBytes`);
   * default DEFAULT_MAX_STORED_VALUE_BYTES (docs/engine.md, "What PostgreSQL can store").
   */
  maxStoredValueBytes?: number;
}

/** What a child call needs of a workflow definition (WorkflowDefinition satisfies it). */
export interface ChildWorkflow<I, O> {
  readonly kind: "workflow";
  readonly name: string;
  readonly version: number;
  readonly input: z.ZodType<I, unknown>;
  readonly output: z.ZodType<O, unknown>;
}

/** Options of a signal wait: the payload's schema, how the status shows it, and its deadline. */
export type SignalWaitOptions<T> = {
  schema: z.ZodType<T, unknown>;
  presentAs?: WaitPresentation;
} & WaitDeadline;

/** The context's signal wait, as the approvals module uses it. */
export type SignalWait = <T>(name: string, options: SignalWaitOptions<T>) => Promise<SignalResult<T>>;
