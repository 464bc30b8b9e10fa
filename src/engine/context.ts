import { randomUUID } from "node:crypto";
import type { ActivityDefinition, AnyActivity } from "./activity.js";
import { isActivity } from "./activity.js";
import { type ApprovalOptions, type ApprovalOutcome, waitForApproval } from "./approvals.js";
import { runChild } from "./context-children.js";
import { recordOnce, runActivity, runStep } from "./context-steps.js";
import type {
  ChildWorkflow,
  ConditionResult,
  ContextDeps,
  SignalResult,
  SignalWaitOptions,
  StepInfo,
  StepOptions,
  WaitDeadline,
} from "./context-types.js";
import { runConditionWait, runSignalWait, runSleep } from "./context-waits.js";
import { type Duration, toMilliseconds } from "./duration.js";
import { assertStorable } from "./errors.js";
import type { JournalEntry } from "./execution-store.js";
import { JournalCursor } from "./journal-cursor.js";
import { type ServiceKey, type ServiceLookup, ServiceSet, serviceLookup } from "./services.js";
import { StopSignal, type TurnStop } from "./turn-stop.js";

export { childExecutionId } from "./context-children.js";
export type {
  ActivityDispatch,
  ChildDispatcher,
  ChildWorkflow,
  ConditionResult,
  ContextDeps,
  EngineHooks,
  SignalResult,
  SignalWaitOptions,
  StepInfo,
  StepOptions,
  WaitDeadline,
  WaitPresentation,
} from "./context-types.js";
export type { ErrorClass } from "./refusals.js";

/**
 * The durable context of one turn (docs/engine.md, "An execution, a job, a turn"). Every call takes
 * the next journal position synchronously, so positions follow call order, also under
 * `Promise.all`. A journaled position returns its recorded value; a new one does the work and
 * writes the result before returning. When the turn must stop (a wait, a suspension,
 * non-determinism, a stale fence) the context closes: the call rejects with a StopSignal and every
 * later call does too.
 */
export class WorkflowContext {
  readonly executionId: string;
  /**
   * The organisation the execution runs for: set by the platform from the caller's API key when it
   * started (a child inherits its parent's), never from input, and fixed for the execution's life.
   */
  readonly orgId: string;
  private readonly cursor: JournalCursor;
  private readonly services: ServiceLookup;
  private lastProgress: Promise<void> = Promise.resolve();

  constructor(deps: ContextDeps) {
    this.cursor = new JournalCursor(deps);
    this.executionId = deps.fence.executionId;
    this.orgId = deps.orgId;
    this.services = deps.services ?? serviceLookup("workflow", { name: "(none)" }, ServiceSet.empty);
  }

  /**
   * A service the workflow declared (`services` of defineWorkflow), provided by the runner. Not
   * journaled: call it where its result is used, inside the step that reaches outside the journal.
   * @throws TenorError SERVICE_NOT_DECLARED when the workflow does not declare `key`.
   */
  service<T>(key: ServiceKey<T>): T {
    return this.services.service(key);
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
  waitForSignal<T>(name: string, options: SignalWaitOptions<T>): Promise<SignalResult<T>> {
    return this.cursor.track(runSignalWait(this.cursor, name, options));
  }

  /**
   * Waits for an identity-bound approval: M-of-N approvers, bound to the hash of
   * `params`, decided through the API. See approvals.ts.
   */
  waitForApproval(name: string, options: ApprovalOptions): Promise<ApprovalOutcome> {
    return waitForApproval((signal, wait) => this.waitForSignal(signal, wait), name, options);
  }

  /** Polls `check` durably every `every` until it holds or the deadline passes. */
  waitFor(
    name: string,
    options: { check: () => Promise<boolean> | boolean; every: Duration } & WaitDeadline,
  ): Promise<ConditionResult> {
    return this.cursor.track(runConditionWait(this.cursor, name, options));
  }

  /** Starts a child workflow and returns its typed result, or throws ChildWorkflowError. */
  child<I, O>(workflow: ChildWorkflow<I, O>, input: I): Promise<O> {
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
    // Thrown at the call (the body never awaits a snapshot), on replay too so the body takes the
    // same path: a typed refusal instead of a write PostgreSQL would refuse after the body moved on.
    assertStorable("the progress snapshot", snapshot, undefined, this.cursor.maxStoredValueBytes);
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

  /**
   * For the end of the turn: writes the step rows still ahead of the journal (JournalCursor.commitAhead),
   * or, `forCompletion`, hands them over for the completion's own statement. Null when a row could
   * not be written: the stop reason says why.
   */
  async settleAhead(options: { forCompletion: boolean }): Promise<JournalEntry[] | null> {
    try {
      if (options.forCompletion) return await this.cursor.takeAheadForCompletion();
      await this.cursor.durable();
      return [];
    } catch (error) {
      if (error instanceof StopSignal) return null;
      throw error;
    }
  }

  /** True once this turn handed the body a StopSignal (JournalCursor.halt). */
  get bodyWasStopped(): boolean {
    return this.cursor.bodyWasStopped;
  }

  /** Waits until no call is in flight, so every finished step is journaled before the turn ends. */
  drain(): Promise<void> {
    return this.cursor.drain();
  }
}
