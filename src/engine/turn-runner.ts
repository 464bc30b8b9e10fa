import { z } from "zod";
import { TenorError } from "../errors/tenor-error.js";
import type { Logger } from "../observability/logger.js";
import { type ChildDispatcher, type EngineHooks, WorkflowContext } from "./context.js";
import { ENGINE_ERRORS } from "./error-codes.js";
import {
  assertStorable,
  BusinessError,
  type FailureRecord,
  TurnFencedError,
  toFailureRecord,
} from "./errors.js";
import { type ExecutionStore, pauseWait, type TurnStart, type WaitDescriptor } from "./execution-store.js";
import { retryTransient } from "./journal-cursor.js";
import type { WorkflowRegistry } from "./registry.js";
import { backoffDelayMs } from "./retry-policy.js";
import { ServiceSet, serviceLookup } from "./services.js";
import { StopSignal } from "./turn-stop.js";

/** Bounds of suspension recovery (docs/engine.md, "Statuses"); from `durable.recovery`. */
export interface RecoveryPolicy {
  maxAttempts: number;
  maxDurationMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** How long a held (non-deterministic) execution waits before a runner tries it again. */
export const HOLD_RETRY_MS = 60_000;

/** What one turn ended with; the transport (BullMQ) maps each to a job move. */
export type TurnOutcome =
  | { kind: "gone" }
  | { kind: "completed"; parentId: string | null }
  | { kind: "failed"; parentId: string | null; failure: FailureRecord }
  | { kind: "fenced" }
  | {
      kind: "parked";
      wakeAt: number | null;
      waitsForChild: boolean;
      signalNames: string[];
      /** Parked on an operator's pause: an unpause that found the turn running is re-checked. */
      paused?: boolean;
    }
  | { kind: "suspended"; wakeAt: number }
  | { kind: "held"; wakeAt: number };

export interface TurnRunnerDeps {
  store: ExecutionStore;
  registry: WorkflowRegistry;
  /** What the workflows' bodies reach outside the journal, each body only what it declared; none when unset. */
  services?: ServiceSet;
  dispatcher: ChildDispatcher;
  recovery: RecoveryPolicy;
  logger: Logger;
  hooks?: EngineHooks;
  clock?: () => number;
  /** Largest stored value, in bytes of its JSON (`durable.maxStoredValueBytes`); ContextDeps has the default. */
  maxStoredValueBytes?: number;
  /**
   * Longest time a turn may go without proving its fence before it starts a step's work
   * (ContextDeps.staleFenceMs); unset: never checked. The runner passes half its lock duration.
   */
  staleFenceMs?: number;
}

/**
 * Advances one execution by one turn: takes the fencing token, loads the journal in one query,
 * replays the body from the top and records how the turn ended
 * (docs/engine.md, "An execution, a job, a turn").
 */
export class TurnRunner {
  private readonly clock: () => number;

  constructor(private readonly deps: TurnRunnerDeps) {
    this.clock = deps.clock ?? Date.now;
  }

  /**
   * @param options.abandoned - true once the transport knows this processing lost the execution
   *   (a newer processing of the same job began): the turn stops at its next journal call.
   * @param options.beforeFence - proves, right before the fence is taken, that this processing
   *   still owns the execution's job; false: no turn is taken (outcome `fenced`), so a runner
   *   that was stopped past its lock never fences out the one that owns the job now.
   */
  async run(
    executionId: string,
    options: { abandoned?: () => boolean; beforeFence?: () => Promise<boolean> } = {},
  ): Promise<TurnOutcome> {
    await this.deps.hooks?.beforeTurn?.({ executionId });
    if (options.abandoned?.() || (options.beforeFence && !(await options.beforeFence()))) {
      return { kind: "fenced" };
    }
    const sent = performance.now();
    const start = await this.deps.store.beginTurn(executionId);
    if (!start) return { kind: "gone" };
    const began = performance.now();
    const { workflow } = start;
    this.deps.hooks?.turnStarted?.({ executionId, workflow });
    let outcome: TurnOutcome | undefined;
    try {
      outcome = await this.advance(start, sent, options.abandoned);
      return outcome;
    } catch (error) {
      // A row the store refused at the end of the turn (a wait's details, say) ends the run once,
      // typed, instead of a turn retried forever as if the database were down.
      if (isRefusedBy(error, ENGINE_ERRORS.VALUE_NOT_STORABLE)) {
        outcome = await this.failTurn(start, error);
        return outcome;
      }
      if (!(error instanceof TurnFencedError)) throw error;
      outcome = { kind: "fenced" };
      return outcome;
    } finally {
      const durationMs = performance.now() - began;
      this.deps.hooks?.turnEnded?.({ executionId, workflow, outcome: outcome?.kind ?? "error", durationMs });
    }
  }

  private async advance(
    start: TurnStart,
    fenceConfirmedAt: number,
    abandoned: (() => boolean) | undefined,
  ): Promise<TurnOutcome> {
    const { store } = this.deps;
    const { fence } = start;
    // Before anything else, so a held or unknown-workflow execution can be cancelled too.
    if (start.cancelRequestedAt) return this.cancelTurn(start, start.cancelRequestedAt);
    // A paused run takes no turn of its body: it parks on its pause until an operator unpauses it.
    if (start.paused) {
      await store.park(fence, [pauseWait(start.paused)], null);
      return { kind: "parked", wakeAt: null, waitsForChild: false, signalNames: [], paused: true };
    }
    const workflow = this.deps.registry.version(start.workflow, start.workflowVersion);
    if (!workflow) {
      // Another release may have it: hold rather than fail, like non-determinism; never run an
      // execution on other code than the version it started with.
      const known = this.deps.registry.versions(start.workflow);
      const code =
        known.length === 0 ? ENGINE_ERRORS.WORKFLOW_UNKNOWN : ENGINE_ERRORS.WORKFLOW_VERSION_UNAVAILABLE;
      const error = new TenorError(
        code,
        known.length === 0
          ? `workflow ${start.workflow} is not registered on this runner`
          : `workflow ${start.workflow} version ${start.workflowVersion} is not registered on this runner ` +
              `(it has ${known.join(", ")}); held until a runner with that version takes it`,
        { details: { workflow: start.workflow, version: start.workflowVersion, registered: known } },
      );
      const wakeAt = this.clock() + HOLD_RETRY_MS;
      await store.hold(fence, toFailureRecord(error, code), new Date(wakeAt));
      return { kind: "held", wakeAt };
    }
    const parsedInput = workflow.input.safeParse(start.input);
    if (!parsedInput.success) {
      const failure = toFailureRecord(
        new BusinessError(
          ENGINE_ERRORS.INPUT_INVALID,
          `stored input failed the schema: ${z.prettifyError(parsedInput.error)}`,
        ),
        ENGINE_ERRORS.INPUT_INVALID,
      );
      await store.fail(fence, failure);
      return { kind: "failed", parentId: start.parentId, failure };
    }
    const ctx = new WorkflowContext({
      fence,
      orgId: start.orgId,
      journal: start.journal,
      afterCleanPark: start.afterCleanPark === true,
      store,
      dispatcher: this.deps.dispatcher,
      hooks: this.deps.hooks ?? {},
      clock: this.clock,
      services: serviceLookup("workflow", workflow, this.deps.services ?? ServiceSet.empty),
      fenceConfirmedAt,
      ...(abandoned ? { abandoned } : {}),
      ...(this.deps.staleFenceMs !== undefined ? { staleFenceMs: this.deps.staleFenceMs } : {}),
      ...(this.deps.maxStoredValueBytes !== undefined
        ? { maxStoredValueBytes: this.deps.maxStoredValueBytes }
        : {}),
    });
    let result: { ok: true; value: unknown } | { ok: false; error: unknown };
    try {
      result = { ok: true, value: await workflow.run(ctx, parsedInput.data) };
    } catch (error) {
      result = { ok: false, error };
    }
    // Read before the drain: a parked call may still be told to stop after the body ended.
    const failedOnItsOwn = !result.ok && !(result.error instanceof StopSignal) && !ctx.bodyWasStopped;
    await ctx.drain();
    // A workflow that returned, or threw while no StopSignal had reached it, is finished: a branch
    // that parked (the timeout of a step that answered, a wait beside a step that failed) is
    // abandoned, as Temporal drops a finished workflow's pending timers.
    const parkedOnly = ctx.stop.reason === null || ctx.stop.reason.kind === "park";
    const returned = result.ok && parkedOnly;
    const finished = parkedOnly && (result.ok || failedOnItsOwn);
    const output = result.ok && returned ? this.encodeOutput(workflow.output, result.value) : null;
    // Step rows still ahead of the journal: written by the completion's own statement, or before
    // anything else ends the turn.
    const ahead = await ctx.settleAhead({ forCompletion: output?.ok === true });
    const reason = ctx.stop.reason;
    if (ahead && output?.ok) {
      try {
        // Retried on a transient error: the statement carries the last step's row, whose work
        // must not run again because a serialization failure or a dropped connection met it.
        await retryTransient(() => store.complete(fence, output.value, ahead));
      } catch (error) {
        // PostgreSQL refused a row the body had already seen; it is journaled as a refusal now.
        if (isRefusedBy(error, ENGINE_ERRORS.RESULT_NOT_STORABLE)) {
          return this.stopTurn(start, { kind: "replay" }, true);
        }
        // The output passed the check above yet the server refused it: it fails once, typed.
        if (isRefusedBy(error, ENGINE_ERRORS.OUTPUT_NOT_STORABLE)) return this.failTurn(start, error);
        throw error;
      }
      return { kind: "completed", parentId: start.parentId };
    }
    if (reason && !(finished && reason.kind === "park"))
      return this.stopTurn(start, reason, ctx.madeProgress);
    if (!result.ok) return this.failTurn(start, result.error);
    return this.failTurn(start, (output as { ok: false; error: unknown }).error);
  }

  private encodeOutput(
    schema: z.ZodType,
    value: unknown,
  ): { ok: true; value: unknown } | { ok: false; error: unknown } {
    let encoded: unknown;
    try {
      encoded = z.encode(schema, value as never);
    } catch (error) {
      return {
        ok: false,
        error: new BusinessError(
          ENGINE_ERRORS.OUTPUT_INVALID,
          `workflow output failed its schema: ${(error as Error).message}`,
        ),
      };
    }
    // Decided before the completion is written (docs/engine.md, "What PostgreSQL can store").
    try {
      assertStorable(
        "the workflow output",
        encoded,
        ENGINE_ERRORS.OUTPUT_NOT_STORABLE,
        this.deps.maxStoredValueBytes,
      );
    } catch (error) {
      return { ok: false, error };
    }
    return { ok: true, value: encoded };
  }

  /** Cooperative cancellation (requested through the API): the run ends `failed` with CANCELLED. */
  /** The failure keeps who asked and why, so they outlive the request's columns and reach the evidence. */
  private async cancelTurn(start: TurnStart, requestedAt: Date): Promise<TurnOutcome> {
    const at = requestedAt.toISOString();
    const by = start.cancelRequestedBy ?? null;
    const reason = start.cancelReason ?? null;
    const who = by && typeof by.subject === "string" ? ` by ${by.subject} (key ${String(by.name)})` : "";
    const failure = toFailureRecord(
      new BusinessError(
        ENGINE_ERRORS.CANCELLED,
        `execution ${start.fence.executionId} was cancelled${who} (requested at ${at})` +
          (reason === null ? "" : `: ${reason}`),
        { requestedAt: at, requestedBy: by, reason },
      ),
      ENGINE_ERRORS.CANCELLED,
    );
    await this.deps.store.fail(start.fence, failure);
    return { kind: "failed", parentId: start.parentId, failure };
  }

  private async failTurn(start: TurnStart, error: unknown): Promise<TurnOutcome> {
    const isBusiness = error instanceof TenorError && !error.retryable;
    const failure = toFailureRecord(error, ENGINE_ERRORS.WORKFLOW_CODE_ERROR);
    if (!isBusiness) {
      failure.code = ENGINE_ERRORS.WORKFLOW_CODE_ERROR;
      this.deps.logger.error("workflow code threw outside any step", {
        executionId: start.fence.executionId,
        workflow: start.workflow,
        error: (error as Error)?.stack ?? String(error),
      });
    }
    await this.deps.store.fail(start.fence, failure);
    return { kind: "failed", parentId: start.parentId, failure };
  }

  private async stopTurn(
    start: TurnStart,
    reason: NonNullable<WorkflowContext["stop"]["reason"]>,
    madeProgress: boolean,
  ): Promise<TurnOutcome> {
    const { store } = this.deps;
    const now = this.clock();
    switch (reason.kind) {
      case "fenced":
        return { kind: "fenced" };
      case "replay":
        // Nothing to store: the execution stays running and the job runs a new turn at once.
        return { kind: "parked", wakeAt: now, waitsForChild: false, signalNames: [] };
      case "park":
        await store.park(start.fence, reason.waits, reason.wakeAt === null ? null : new Date(reason.wakeAt));
        return {
          kind: "parked",
          wakeAt: reason.rerun ? now : reason.wakeAt,
          waitsForChild: reason.child,
          signalNames: reason.signalNames,
          paused: reason.waits.some((wait) => wait.kind === "pause"),
        };
      case "hold": {
        const wakeAt = now + HOLD_RETRY_MS;
        await store.hold(
          start.fence,
          toFailureRecord(reason.error, ENGINE_ERRORS.NON_DETERMINISM),
          new Date(wakeAt),
        );
        this.deps.logger.warn("execution held for non-determinism", {
          executionId: start.fence.executionId,
          workflow: start.workflow,
          error: reason.error.message,
        });
        return { kind: "held", wakeAt };
      }
      case "suspend":
        return this.suspendTurn(start, reason.wait, now, madeProgress);
    }
  }

  /**
   * Suspends with bounded, growing recovery delays; past the bound the run fails RECOVERY_EXHAUSTED.
   * The bound is per outage: a turn that journaled anything got past the previous one, so its
   * suspension starts counting afresh instead of inheriting an earlier outage's attempts and age.
   */
  private async suspendTurn(
    start: TurnStart,
    wait: WaitDescriptor,
    now: number,
    newOutage: boolean,
  ): Promise<TurnOutcome> {
    const { recovery } = this.deps;
    const attempt = newOutage ? 1 : start.recoveryAttempts + 1;
    const since = newOutage ? now : (start.suspendedSince?.getTime() ?? now);
    if (attempt > recovery.maxAttempts || now - since > recovery.maxDurationMs) {
      const failure = toFailureRecord(
        new TenorError(
          ENGINE_ERRORS.RECOVERY_EXHAUSTED,
          `recovery of "${wait.name}" exhausted after ${attempt - 1} attempts over ${Math.round((now - since) / 1000)} s`,
          {
            retryable: true,
            details: { step: wait.name, attempts: attempt - 1, lastError: wait.details ?? null },
          },
        ),
        ENGINE_ERRORS.RECOVERY_EXHAUSTED,
      );
      await this.deps.store.fail(start.fence, failure);
      return { kind: "failed", parentId: start.parentId, failure };
    }
    const delayMs = backoffDelayMs(
      { initialDelayMs: recovery.baseDelayMs, factor: 2, maxDelayMs: recovery.maxDelayMs, jitter: 0.2 },
      attempt,
    );
    const wakeAt = now + delayMs;
    await this.deps.store.suspend(
      start.fence,
      { ...wait, until: new Date(wakeAt).toISOString(), details: { ...wait.details, attempt } },
      new Date(wakeAt),
      newOutage,
    );
    return { kind: "suspended", wakeAt };
  }
}

/** True for the store's typed refusal `code` (a BusinessError the store raised for the data). */
function isRefusedBy(error: unknown, code: string): boolean {
  return error instanceof BusinessError && error.code === code;
}
