import { z } from "zod";
import type { AnyActivity } from "./activity.js";
import type { StepInfo, StepOptions } from "./context-types.js";
import { ENGINE_ERRORS } from "./error-codes.js";
import { BusinessError } from "./errors.js";
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
        const record = refusalRecord(error);
        const entry = { position, kind: "step" as const, name, state: "error" as const, result: null };
        return cursor.commit(
          (seq) => cursor.append({ ...entry, error: record, attempts: attempt, seq, cause }),
          () => {
            throw reviveRefusal(record, options.nonRetryable);
          },
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
  const { position, cause, entry } = cursor.claim("step", name);
  const outcome = { schema: activity.output, nonRetryable: activity.nonRetryable ?? [] } as StepOptions<T>;
  if (entry && entry.state !== "pending") return cursor.replay(entry, () => replayOutcome(entry, outcome));
  if (!entry) {
    const result = {
      activity: activity.name,
      queue: activity.queue.name,
      input: z.encode(activity.input, input),
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
