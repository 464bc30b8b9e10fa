import { z } from "zod";
import type { ConditionResult, SignalResult, WaitDeadline, WaitPresentation } from "./context.js";
import { type Duration, toMilliseconds } from "./duration.js";
import { ENGINE_ERRORS } from "./error-codes.js";
import { BusinessError } from "./errors.js";
import type { JournalEntry } from "./execution-store.js";
import type { JournalCursor } from "./journal-cursor.js";
import { StopSignal } from "./turn-stop.js";

/** Durable waits of a WorkflowContext: timers, signals and polled conditions. */

export async function runSleep(
  cursor: JournalCursor,
  name: string,
  wakeAtOnFirstRun: () => number,
): Promise<void> {
  const { position, entry } = cursor.claim("sleep", name);
  let wakeAt: number;
  if (entry) {
    wakeAt = Date.parse((entry.result as { wakeAt: string }).wakeAt);
  } else {
    wakeAt = wakeAtOnFirstRun();
    const result = { wakeAt: new Date(wakeAt).toISOString() };
    await cursor.append({ position, kind: "sleep", name, state: "ok", result, error: null, attempts: 1 });
  }
  if (cursor.deps.clock() >= wakeAt) return;
  cursor.stop.park({ kind: "timer", name, position, until: new Date(wakeAt).toISOString() }, wakeAt);
  throw new StopSignal();
}

export async function runSignalWait<T>(
  cursor: JournalCursor,
  name: string,
  options: { schema: z.ZodType<T, unknown>; presentAs?: WaitPresentation } & WaitDeadline,
): Promise<SignalResult<T>> {
  const { position, entry } = cursor.claim("signal", name);
  if (entry && entry.state !== "pending") {
    return decodeSignal(entry.result as SignalResult<unknown>, options.schema, name);
  }
  const deadline = await pendingDeadline(cursor, "signal", name, position, entry, options);
  const consumed = await cursor.write("signal consumption", () =>
    cursor.deps.store.consumeSignal(cursor.deps.fence, position, name),
  );
  if (consumed) {
    cursor.noteProgress();
    return decodeSignal({ timedOut: false, payload: consumed.payload }, options.schema, name);
  }
  if (deadline !== null && cursor.deps.clock() >= Date.parse(deadline)) {
    await cursor.resolve(position, "ok", { timedOut: true }, null);
    return { timedOut: true };
  }
  cursor.stop.park(
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

function decodeSignal<T>(
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

export async function runConditionWait(
  cursor: JournalCursor,
  name: string,
  options: { check: () => Promise<boolean> | boolean; every: Duration } & WaitDeadline,
): Promise<ConditionResult> {
  const { position, entry } = cursor.claim("condition", name);
  if (entry && entry.state !== "pending") return entry.result as ConditionResult;
  const deadline = await pendingDeadline(cursor, "condition", name, position, entry, options);
  let satisfied = false;
  try {
    satisfied = (await options.check()) === true;
  } catch {
    // A failed read is transient by definition here: the next poll reads again.
    satisfied = false;
  }
  if (satisfied) {
    await cursor.resolve(position, "ok", { satisfied: true }, null);
    return { satisfied: true };
  }
  const now = cursor.deps.clock();
  if (deadline !== null && now >= Date.parse(deadline)) {
    await cursor.resolve(position, "ok", { timedOut: true }, null);
    return { timedOut: true };
  }
  const nextPoll = now + toMilliseconds(options.every);
  const wakeAt = deadline === null ? nextPoll : Math.min(nextPoll, Date.parse(deadline));
  cursor.stop.park({ kind: "condition", name, position, ...(deadline ? { until: deadline } : {}) }, wakeAt);
  throw new StopSignal();
}

/**
 * The deadline of a wait position: recorded with the pending position the first time (so a
 * timeout counts from the first encounter, not from each replay), read back afterwards.
 */
async function pendingDeadline(
  cursor: JournalCursor,
  kind: "signal" | "condition",
  name: string,
  position: number,
  entry: JournalEntry | undefined,
  options: WaitDeadline,
): Promise<string | null> {
  if (entry) return (entry.result as { deadline: string | null }).deadline;
  const deadline = cursor.deadlineOf(options);
  const result = { deadline };
  await cursor.append({ position, kind, name, state: "pending", result, error: null, attempts: 1 });
  return deadline;
}
