import { createHash, randomUUID } from "node:crypto";
import { z } from "zod";
import { TenorError } from "../errors/tenor-error.js";
import { type ActivityDefinition, type AnyActivity, isActivity } from "./activity.js";
import { type ApprovalOptions, type ApprovalOutcome, waitForApproval } from "./approvals.js";
import { type Duration, toMilliseconds } from "./duration.js";
import { ENGINE_ERRORS } from "./error-codes.js";
import {
  BusinessError,
  ChildWorkflowError,
  type FailureRecord,
  NonDeterminismError,
  TurnFencedError,
} from "./errors.js";
import type { ExecutionStore, Fence, JournalEntry, JournalKind, WaitDescriptor } from "./execution-store.js";
import { decodeValue, encodeValue } from "./journal-codec.js";
import { backoffDelayMs, type RetryPolicy, resolveRetryPolicy } from "./retry-policy.js";
import { StopSignal, TurnStop } from "./turn-stop.js";
import type { WorkflowDefinition } from "./workflow.js";

export type { ErrorClass } from "./refusals.js";

import { type ErrorClass, isRefusal, refusalRecord, reviveRefusal } from "./refusals.js";

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

/** Test and instrumentation hooks; production code passes none. */
export interface EngineHooks {
  /** Runs after a step's work succeeded and before its checkpoint is written. */
  beforeCheckpoint?(info: { executionId: string; step: string; position: number }): void | Promise<void>;
}

export interface ContextDeps {
  fence: Fence;
  orgId: string;
  journal: readonly JournalEntry[];
  store: ExecutionStore;
  dispatcher: ChildDispatcher;
  hooks: EngineHooks;
  clock: () => number;
}

/** Attempts of a checkpoint write that failed for an infrastructure reason, before suspending. */
const CHECKPOINT_WRITE_ATTEMPTS = 3;

/**
 * The durable context of one turn (DESIGN §2.1–2.2). Every call takes the next journal position
 * synchronously, so positions follow call order, also under `Promise.all`. A journaled position
 * returns its recorded value; a new one does the work and writes the result before returning.
 * When the turn must stop (a wait, a suspension, non-determinism, a stale fence) the context
 * closes: the call rejects with a StopSignal and every later call does too.
 */
export class WorkflowContext {
  readonly executionId: string;
  private readonly journal = new Map<number, JournalEntry>();
  private nextPosition = 0;
  private readonly inflight = new Set<Promise<unknown>>();
  private lastProgress: Promise<void> = Promise.resolve();
  /** Positions this turn journaled or resolved: any means the execution moved past its last outage. */
  private journaledThisTurn = 0;
  readonly stop = new TurnStop();

  constructor(private readonly deps: ContextDeps) {
    this.executionId = deps.fence.executionId;
    for (const entry of deps.journal) this.journal.set(entry.position, entry);
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
    if (isActivity(target))
      return this.track(this.runActivity(name, target, (options as { input: unknown }).input));
    return this.track(this.runStep(name, target, options as StepOptions<T>));
  }

  /** A durable timer: the execution leaves the runner and is woken when it is due. */
  sleep(name: string, duration: Duration): Promise<void> {
    const ms = toMilliseconds(duration);
    return this.track(this.runSleep(name, () => this.deps.clock() + ms));
  }

  sleepUntil(name: string, at: Date): Promise<void> {
    return this.track(this.runSleep(name, () => at.getTime()));
  }

  /** Waits for the signal `name`; early signals are kept and consumed in arrival order, once each. */
  waitForSignal<T>(
    name: string,
    options: { schema: z.ZodType<T, unknown>; presentAs?: WaitPresentation } & WaitDeadline,
  ): Promise<SignalResult<T>> {
    return this.track(this.runSignalWait(name, options));
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
    return this.track(this.runConditionWait(name, options));
  }

  /** Starts a child workflow and returns its typed result, or throws ChildWorkflowError. */
  child<I, O>(workflow: WorkflowDefinition<I, O>, input: I): Promise<O> {
    return this.track(this.runChild(workflow, input));
  }

  now(): Promise<Date> {
    return this.track(this.recordOnce("now", () => new Date(this.deps.clock()).toISOString())).then(
      (v) => new Date(v),
    );
  }

  uuid(): Promise<string> {
    return this.track(this.recordOnce("uuid", () => randomUUID()));
  }

  random(): Promise<number> {
    return this.track(this.recordOnce("random", () => Math.random()));
  }

  /** Publishes a progress snapshot to the status projection (only when running new work, not replaying). */
  progress(snapshot: Record<string, unknown>): Promise<void> {
    if (this.stop.closed || this.nextPosition < this.journal.size) return Promise.resolve();
    // One write after the other: concurrent writes on different pool connections can commit out
    // of order and leave an older snapshot in the projection.
    const written = this.track(
      this.lastProgress.then(() =>
        this.write("progress", () => this.deps.store.setProgress(this.deps.fence, snapshot)),
      ),
    );
    this.lastProgress = written.catch(() => undefined);
    return written;
  }

  /** True when this turn journaled or resolved at least one position (it made progress). */
  get madeProgress(): boolean {
    return this.journaledThisTurn > 0;
  }

  /** Waits until no call is in flight, so every finished step is journaled before the turn ends. */
  async drain(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.inflight.add(promise);
    const forget = () => this.inflight.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  /** Takes the next position and checks it against the journal. Must run synchronously at call time. */
  private claim(kind: JournalKind, name: string): { position: number; entry: JournalEntry | undefined } {
    if (this.stop.closed) throw new StopSignal();
    const position = this.nextPosition++;
    const entry = this.journal.get(position);
    if (entry && (entry.kind !== kind || entry.name !== name)) {
      this.stop.hold(
        new NonDeterminismError(position, { kind: entry.kind, name: entry.name }, { kind, name }),
      );
      throw new StopSignal();
    }
    return { position, entry };
  }

  private async runStep<T>(
    name: string,
    fn: (info: StepInfo) => Promise<T> | T,
    options: StepOptions<T>,
  ): Promise<T> {
    const { position, entry } = this.claim("step", name);
    if (entry) return this.replayOutcome(entry, options);
    const policy = resolveRetryPolicy(options.retry);
    for (let attempt = 1; ; attempt++) {
      let value: T;
      try {
        value = await fn({ executionId: this.executionId, position, attempt });
      } catch (error) {
        if (error instanceof StopSignal) throw error;
        if (isRefusal(error, options.nonRetryable)) {
          const record = refusalRecord(error);
          await this.append({
            position,
            kind: "step",
            name,
            state: "error",
            result: null,
            error: record,
            attempts: attempt,
          });
          throw reviveRefusal(record, options.nonRetryable);
        }
        if (attempt >= policy.attempts) {
          this.stop.suspend({
            kind: "recovery",
            name,
            position,
            details: { attempts: attempt, error: (error as Error)?.message ?? String(error) },
          });
          throw new StopSignal();
        }
        await delay(backoffDelayMs(policy, attempt));
        if (this.stop.closed) throw new StopSignal();
        continue;
      }
      const encoded = this.encodeStepResult(name, value, options.schema);
      await this.deps.hooks.beforeCheckpoint?.({ executionId: this.executionId, step: name, position });
      await this.append({
        position,
        kind: "step",
        name,
        state: "ok",
        result: encoded,
        error: null,
        attempts: attempt,
      });
      return decodeValue(encoded, options.schema) as T;
    }
  }

  private replayOutcome<T>(entry: JournalEntry, options: StepOptions<T>): T {
    if (entry.state === "error" && entry.error) throw reviveRefusal(entry.error, options.nonRetryable);
    return decodeValue(entry.result, options.schema) as T;
  }

  private encodeStepResult<T>(name: string, value: T, schema: z.ZodType<T, unknown> | undefined): unknown {
    try {
      return encodeValue(value, schema);
    } catch (error) {
      throw new BusinessError(
        ENGINE_ERRORS.STEP_RESULT_NOT_SERIALIZABLE,
        `step "${name}" returned a value that cannot be journaled: ${(error as Error).message}; give the step a schema`,
        { step: name },
      );
    }
  }

  private async runSleep(name: string, wakeAtOnFirstRun: () => number): Promise<void> {
    const { position, entry } = this.claim("sleep", name);
    let wakeAt: number;
    if (entry) {
      wakeAt = Date.parse((entry.result as { wakeAt: string }).wakeAt);
    } else {
      wakeAt = wakeAtOnFirstRun();
      const result = { wakeAt: new Date(wakeAt).toISOString() };
      await this.append({ position, kind: "sleep", name, state: "ok", result, error: null, attempts: 1 });
    }
    if (this.deps.clock() >= wakeAt) return;
    this.stop.park({ kind: "timer", name, position, until: new Date(wakeAt).toISOString() }, wakeAt);
    throw new StopSignal();
  }

  private async runSignalWait<T>(
    name: string,
    options: { schema: z.ZodType<T, unknown>; presentAs?: WaitPresentation } & WaitDeadline,
  ): Promise<SignalResult<T>> {
    const { position, entry } = this.claim("signal", name);
    const deadline = entry
      ? (entry.result as { deadline: string | null }).deadline
      : this.deadlineOf(options);
    if (!entry) {
      await this.append({
        position,
        kind: "signal",
        name,
        state: "pending",
        result: { deadline },
        error: null,
        attempts: 1,
      });
    } else if (entry.state !== "pending") {
      return this.decodeSignal(entry.result as SignalResult<unknown>, options.schema, name);
    }
    const consumed = await this.write("signal consumption", () =>
      this.deps.store.consumeSignal(this.deps.fence, position, name),
    );
    if (consumed) {
      this.journaledThisTurn++;
      return this.decodeSignal({ timedOut: false, payload: consumed.payload }, options.schema, name);
    }
    if (deadline !== null && this.deps.clock() >= Date.parse(deadline)) {
      await this.resolve(position, "ok", { timedOut: true }, null);
      return { timedOut: true };
    }
    this.stop.park(
      {
        kind: options.presentAs?.kind ?? "signal",
        name: options.presentAs?.name ?? name,
        position,
        ...(deadline ? { until: deadline } : {}),
        ...(options.presentAs?.details ? { details: options.presentAs.details } : {}),
      },
      deadline ? Date.parse(deadline) : null,
      { signalName: name },
    );
    throw new StopSignal();
  }

  private decodeSignal<T>(
    result: SignalResult<unknown>,
    schema: z.ZodType<T, unknown>,
    name: string,
  ): SignalResult<T> {
    if (result.timedOut) return { timedOut: true };
    const parsed = schema.safeParse(result.payload);
    if (!parsed.success) {
      throw new BusinessError(
        ENGINE_ERRORS.INPUT_INVALID,
        `signal "${name}" payload failed its schema: ${z.prettifyError(parsed.error)}`,
        {
          signal: name,
        },
      );
    }
    return { timedOut: false, payload: parsed.data };
  }

  private async runConditionWait(
    name: string,
    options: { check: () => Promise<boolean> | boolean; every: Duration } & WaitDeadline,
  ): Promise<ConditionResult> {
    const { position, entry } = this.claim("condition", name);
    if (entry && entry.state !== "pending") return entry.result as ConditionResult;
    const deadline = entry
      ? (entry.result as { deadline: string | null }).deadline
      : this.deadlineOf(options);
    if (!entry) {
      await this.append({
        position,
        kind: "condition",
        name,
        state: "pending",
        result: { deadline },
        error: null,
        attempts: 1,
      });
    }
    let satisfied = false;
    try {
      satisfied = (await options.check()) === true;
    } catch {
      // A failed read is transient by definition here: the next poll reads again.
      satisfied = false;
    }
    if (satisfied) {
      await this.resolve(position, "ok", { satisfied: true }, null);
      return { satisfied: true };
    }
    const now = this.deps.clock();
    if (deadline !== null && now >= Date.parse(deadline)) {
      await this.resolve(position, "ok", { timedOut: true }, null);
      return { timedOut: true };
    }
    const nextPoll = now + toMilliseconds(options.every);
    const wakeAt = deadline === null ? nextPoll : Math.min(nextPoll, Date.parse(deadline));
    this.stop.park({ kind: "condition", name, position, ...(deadline ? { until: deadline } : {}) }, wakeAt);
    throw new StopSignal();
  }

  private async runChild<I, O>(workflow: WorkflowDefinition<I, O>, input: I): Promise<O> {
    const { position, entry } = this.claim("child", workflow.name);
    const childId = entry
      ? (entry.result as { childId: string }).childId
      : childExecutionId(this.executionId, position);
    if (entry?.state === "ok")
      return workflow.output.parse((entry.result as { output: unknown }).output) as O;
    if (entry?.state === "error" && entry.error) throw new ChildWorkflowError(childId, entry.error);
    if (!entry) {
      const result = { childId, workflow: workflow.name };
      await this.append({
        position,
        kind: "child",
        name: workflow.name,
        state: "pending",
        result,
        error: null,
        attempts: 1,
      });
    }
    let summary = await this.deps.store.getSummary(childId);
    if (!summary) {
      const created = await this.write("child execution", () =>
        this.deps.store.createExecution(
          {
            id: childId,
            workflow: workflow.name,
            workflowVersion: workflow.version,
            orgId: this.deps.orgId,
            input: z.encode(workflow.input, input),
            key: null,
            idempotencyKey: null,
            requestHash: null,
            parentId: this.executionId,
            parentPosition: position,
          },
          this.deps.fence,
        ),
      );
      summary = created.summary;
    }
    if (summary.status === "completed") {
      const result = { childId, workflow: workflow.name, output: summary.output };
      await this.resolve(position, "ok", result, null);
      return workflow.output.parse(summary.output) as O;
    }
    if (summary.status === "failed" && summary.failure) {
      await this.resolve(position, "error", { childId, workflow: workflow.name }, summary.failure);
      throw new ChildWorkflowError(childId, summary.failure);
    }
    await this.write("child dispatch", () =>
      this.deps.dispatcher.dispatchChild({ id: childId, workflow: workflow.name }, this.executionId),
    );
    this.stop.park({ kind: "child", name: workflow.name, position, details: { childId } }, null, {
      child: true,
    });
    throw new StopSignal();
  }

  /**
   * An activity step: journal the encoded input as a pending position, dispatch the job, wait for
   * it as for a child. The activity worker resolves the position exactly once (ok or refusal);
   * a job that exhausted its retries suspends the execution like an inline step would.
   */
  private async runActivity<T>(name: string, activity: AnyActivity, input: unknown): Promise<T> {
    const { position, entry } = this.claim("step", name);
    const outcome = { schema: activity.output, nonRetryable: activity.nonRetryable ?? [] } as StepOptions<T>;
    if (entry && entry.state !== "pending") return this.replayOutcome(entry, outcome);
    if (!entry) {
      const result = {
        activity: activity.name,
        queue: activity.queue.name,
        input: z.encode(activity.input, input),
      };
      await this.append({ position, kind: "step", name, state: "pending", result, error: null, attempts: 1 });
    }
    const dispatch = {
      executionId: this.executionId,
      position,
      activity: activity.name,
      queue: activity.queue.name,
    };
    const dispatched = await this.write("activity dispatch", () =>
      this.deps.dispatcher.dispatchActivity(dispatch),
    );
    if (dispatched.state === "failed") {
      this.stop.suspend({
        kind: "recovery",
        name,
        position,
        details: { activity: activity.name, error: dispatched.reason },
      });
    } else {
      const details = { activity: activity.name, queue: activity.queue.name };
      this.stop.park({ kind: "activity", name, position, details }, null, { child: true });
    }
    throw new StopSignal();
  }

  private async recordOnce<T>(kind: "now" | "uuid" | "random", produce: () => T): Promise<T> {
    const { position, entry } = this.claim(kind, kind);
    if (entry) return entry.result as T;
    const value = produce();
    await this.append({ position, kind, name: kind, state: "ok", result: value, error: null, attempts: 1 });
    return value;
  }

  private deadlineOf(options: WaitDeadline): string | null {
    if (options.deadline) return options.deadline.toISOString();
    if (options.timeout !== undefined)
      return new Date(this.deps.clock() + toMilliseconds(options.timeout)).toISOString();
    return null;
  }

  private async append(entry: JournalEntry): Promise<void> {
    await this.write(`journal position ${entry.position}`, () =>
      this.deps.store.appendEntry(this.deps.fence, entry),
    );
    this.journaledThisTurn++;
  }

  private async resolve(
    position: number,
    state: "ok" | "error",
    result: unknown,
    error: FailureRecord | null,
  ): Promise<void> {
    await this.write(`journal position ${position}`, () =>
      this.deps.store.resolveEntry(this.deps.fence, position, state, result, error),
    );
    this.journaledThisTurn++;
  }

  /**
   * A fenced write stops the turn at once. Any other failure is the store's (a dropped
   * connection): retried a few times, then the turn suspends and recovery tries again later.
   */
  private async write<T>(what: string, operation: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await operation();
      } catch (error) {
        if (error instanceof TurnFencedError) {
          this.stop.fence();
          throw new StopSignal();
        }
        if (error instanceof TenorError && !error.retryable) throw error;
        if (attempt >= CHECKPOINT_WRITE_ATTEMPTS) {
          this.stop.suspend({
            kind: "recovery",
            name: what,
            details: { error: (error as Error).message, attempts: attempt },
          });
          throw new StopSignal();
        }
        await delay(50 * attempt);
      }
    }
  }
}

/** Deterministic child id: the same parent position always names the same child. */
export function childExecutionId(parentId: string, position: number): string {
  // A UUID (version 8, "custom") from the first 16 bytes of SHA-256(parent id / position).
  const bytes = createHash("sha256").update(`${parentId}/${position}`).digest().subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const h = bytes.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
