import { z } from "zod";
import { describePath, escapeText, findUnstorable } from "../values/storable.js";
import type { AnyActivity } from "./activity.js";
import type { StepInfo, StepOptions } from "./context-types.js";
import { ENGINE_ERRORS } from "./error-codes.js";
import { assertStorable, BusinessError } from "./errors.js";
import type { JournalEntry } from "./execution-store.js";
import { decodeValue, encodeValue } from "./journal-codec.js";
import { delay, type JournalCursor } from "./journal-cursor.js";
import { isRefusal, refusalRecord, reviveRefusal } from "./refusals.js";
import { backoffDelayMs, resolveRetryPolicy } from "./retry-policy.js";
import { StopSignal } from "./turn-stop.js";

/** Steps, activities and recorded values (`now`, `uuid`, `random`) of a WorkflowContext. */

export async function runStep<T>(
  cursor: JournalCursor,
  name: string,
  fn: (info: StepInfo) => Promise<T> | T,
  options: StepOptions<T>,
): Promise<T> {
  const { position, cause, entry } = cursor.claim("step", name);
  if (entry) return cursor.replay(entry, () => replayOutcome(entry, options));
  const policy = resolveRetryPolicy(options.retry);
  const began = performance.now();
  for (let attempt = 1; ; attempt++) {
    // The outcomes the body already has are journaled before this step's work begins.
    await cursor.durable();
    await cursor.deps.hooks.beforeStep?.({ executionId: cursor.executionId, step: name, position });
    // A run paused while this turn ran takes no new step (docs/engine.md, "Pause").
    await cursor.stopIfPaused();
    // A runner that stalled (GC, SIGSTOP, a lost Redis) may have lost the execution meanwhile:
    // it proves its fence before starting any step's work (docs/engine.md, "Fencing").
    await cursor.confirmFenceIfStale();
    let value: T;
    const release = cursor.order.hold();
    try {
      value = await fn({ executionId: cursor.executionId, position, attempt });
    } catch (error) {
      release();
      if (error instanceof StopSignal) throw error;
      if (isRefusal(error, options.nonRetryable)) {
        return commitRefusal(
          cursor,
          { position, name, attempts: attempt, cause },
          error,
          options.nonRetryable,
        );
      }
      if (attempt >= policy.attempts) {
        cursor.stop.suspend({
          kind: "recovery",
          name,
          position,
          details: { attempts: attempt, error: (error as Error)?.message ?? String(error) },
        });
        throw cursor.halt();
      }
      await delay(backoffDelayMs(policy, attempt));
      if (cursor.stop.closed) throw cursor.halt();
      continue;
    }
    release();
    const encoded = encodeStepResult(name, value, options.schema);
    // What PostgreSQL cannot store is decided here, before any row of the turn is written: the
    // step fails once with a typed refusal, which the journal holds and every replay re-raises.
    const unstorable = findUnstorable(encoded, { maxBytes: cursor.maxStoredValueBytes });
    if (unstorable) {
      const refusal = new BusinessError(
        ENGINE_ERRORS.RESULT_NOT_STORABLE,
        `step "${escapeText(name)}" at position ${position} returned a value PostgreSQL cannot store: ` +
          `${describePath(unstorable.path)} ${unstorable.reason}; it fails once and is not retried`,
        { step: name, position, path: describePath(unstorable.path), rule: unstorable.rule },
      );
      return commitRefusal(
        cursor,
        { position, name, attempts: attempt, cause },
        refusal,
        options.nonRetryable,
      );
    }
    const durationMs = performance.now() - began;
    await cursor.deps.hooks.beforeCheckpoint?.({
      executionId: cursor.executionId,
      step: name,
      position,
      durationMs,
    });
    const row = { position, kind: "step" as const, name, state: "ok" as const, result: encoded, error: null };
    return cursor.commitAhead(
      { ...row, attempts: attempt, cause },
      () => decodeValue(encoded, options.schema) as T,
    );
  }
}

/** Journals a step's refusal as its outcome before the body sees it; replay re-raises it as its class. */
function commitRefusal<T>(
  cursor: JournalCursor,
  at: { position: number; name: string; attempts: number; cause: number },
  error: unknown,
  nonRetryable: StepOptions<T>["nonRetryable"],
): Promise<T> {
  const record = refusalRecord(error);
  const row = { ...at, kind: "step" as const, state: "error" as const, result: null, error: record };
  return cursor.commitFinished(row, () => {
    throw reviveRefusal(record, nonRetryable);
  });
}

function replayOutcome<T>(entry: JournalEntry, options: StepOptions<T>): T {
  if (entry.state === "error" && entry.error) throw reviveRefusal(entry.error, options.nonRetryable);
  return decodeValue(entry.result, options.schema) as T;
}

function encodeStepResult<T>(name: string, value: T, schema: z.ZodType<T, unknown> | undefined): unknown {
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

/**
 * An activity step: journal the encoded input as a pending position, dispatch the job, wait for
 * it as for a child. The activity worker resolves the position exactly once (ok or refusal);
 * a job that exhausted its retries suspends the execution like an inline step would.
 */
export async function runActivity<T>(
  cursor: JournalCursor,
  name: string,
  activity: AnyActivity,
  input: unknown,
): Promise<T> {
  // Encoded and checked before the position is taken: an input that cannot be stored is refused
  // the same way on every replay, without a position the journal would never hold.
  const encodedInput = z.encode(activity.input, input);
  assertStorable(
    `the input of activity "${activity.name}"`,
    encodedInput,
    undefined,
    cursor.maxStoredValueBytes,
    {
      activity: activity.name,
    },
  );
  const { position, cause, entry } = cursor.claim("step", name);
  const outcome = { schema: activity.output, nonRetryable: activity.nonRetryable ?? [] } as StepOptions<T>;
  if (entry && entry.state !== "pending") return cursor.replay(entry, () => replayOutcome(entry, outcome));
  if (!entry) {
    const result = {
      activity: activity.name,
      queue: activity.queue.name,
      input: encodedInput,
    };
    await cursor.append({
      position,
      kind: "step",
      name,
      state: "pending",
      result,
      error: null,
      attempts: 1,
      seq: null,
      cause,
    });
  }
  const dispatch = {
    executionId: cursor.executionId,
    position,
    activity: activity.name,
    queue: activity.queue.name,
  };
  const dispatched = await cursor.write("activity dispatch", () =>
    cursor.deps.dispatcher.dispatchActivity(dispatch),
  );
  if (dispatched.state === "failed") {
    cursor.stop.suspend({
      kind: "recovery",
      name,
      position,
      details: { activity: activity.name, error: dispatched.reason },
    });
    throw cursor.halt();
  }
  const details = { activity: activity.name, queue: activity.queue.name };
  cursor.stop.park({ kind: "activity", name, position, details }, null, { child: true });
  return cursor.parked();
}

export async function recordOnce<T>(
  cursor: JournalCursor,
  kind: "now" | "uuid" | "random",
  produce: () => T,
): Promise<T> {
  const { position, cause, entry } = cursor.claim(kind, kind);
  if (entry) return cursor.replay(entry, () => entry.result as T);
  const value = produce();
  return cursor.commit(
    (seq) =>
      cursor.append({
        position,
        kind,
        name: kind,
        state: "ok",
        result: value,
        error: null,
        attempts: 1,
        seq,
        cause,
      }),
    () => value,
  );
}
