import { z } from "zod";
import type { ConditionResult, SignalResult, WaitDeadline, WaitPresentation } from "./context-types.js";
import { type Duration, toMilliseconds } from "./duration.js";
import { ENGINE_ERRORS } from "./error-codes.js";
import { BusinessError } from "./errors.js";
import type { JournalEntry } from "./execution-store.js";
import type { JournalCursor } from "./journal-cursor.js";

/** Durable waits of a WorkflowContext: timers, signals and polled conditions. */

export async function runSleep(
  cursor: JournalCursor,
  name: string,
  wakeAtOnFirstRun: () => number,
): Promise<void> {
  const { position, cause, entry } = cursor.claim("sleep", name);
  if (entry) {
    const wakeAt = Date.parse((entry.result as { wakeAt: string }).wakeAt);
    if (cursor.deps.clock() >= wakeAt) return cursor.replay(entry, () => undefined);
    return parkOnTimer(cursor, name, position, wakeAt);
  }
  const wakeAt = wakeAtOnFirstRun();
  const result = { wakeAt: new Date(wakeAt).toISOString() };
  // The timer is numbered when it is set; it is delivered at that number once due (a park ends
  // the turn, so no later position can have been taken before it in any turn).
  const seq = cursor.order.issue();
  try {
    await cursor.append({
      position,
      kind: "sleep",
      name,
      state: "ok",
      result,
      error: null,
      attempts: 1,
      seq,
      cause,
    });
  } catch (error) {
    cursor.order.abandon(seq);
    throw error;
  }
  if (cursor.deps.clock() >= wakeAt) return cursor.deliverAt(seq, () => undefined);
  cursor.order.abandon(seq);
  return parkOnTimer(cursor, name, position, wakeAt);
}

function parkOnTimer(cursor: JournalCursor, name: string, position: number, wakeAt: number): Promise<void> {
  cursor.stop.park({ kind: "timer", name, position, until: new Date(wakeAt).toISOString() }, wakeAt);
  return cursor.parked();
}

export async function runSignalWait<T>(
  cursor: JournalCursor,
  name: string,
  options: { schema: z.ZodType<T, unknown>; presentAs?: WaitPresentation } & WaitDeadline,
): Promise<SignalResult<T>> {
  const { position, cause, entry } = cursor.claim("signal", name);
  if (entry && entry.state !== "pending") {
    return cursor.replay(entry, () =>
      decodeSignal(entry.result as SignalResult<unknown>, options.schema, name),
    );
  }
  const deadline = await pendingDeadline(cursor, "signal", name, position, cause, entry, options);
  const seq = cursor.order.issue();
  let consumed: { payload: unknown } | null;
  try {
    consumed = await cursor.write("signal consumption", () =>
      cursor.deps.store.consumeSignal(cursor.deps.fence, position, name, seq),
    );
  } catch (error) {
    cursor.order.abandon(seq);
    throw error;
  }
  if (consumed) {
    cursor.noteProgress();
    const payload = consumed.payload;
    return cursor.deliverAt(seq, () => decodeSignal({ timedOut: false, payload }, options.schema, name));
  }
  cursor.order.abandon(seq);
  if (deadline !== null && cursor.deps.clock() >= Date.parse(deadline)) {
    return cursor.commit(
      (at) => cursor.resolve(position, at, "ok", { timedOut: true }, null),
      () => ({ timedOut: true }) as const,
    );
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
  return cursor.parked();
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
  const { position, cause, entry } = cursor.claim("condition", name);
  if (entry && entry.state !== "pending") return cursor.replay(entry, () => entry.result as ConditionResult);
  const deadline = await pendingDeadline(cursor, "condition", name, position, cause, entry, options);
  let satisfied = false;
  const release = cursor.order.hold();
  try {
    satisfied = (await options.check()) === true;
  } catch {
    // A failed read is transient by definition here: the next poll reads again.
    satisfied = false;
  } finally {
    release();
  }
  if (satisfied) {
    return cursor.commit(
      (seq) => cursor.resolve(position, seq, "ok", { satisfied: true }, null),
      () => ({ satisfied: true }) as const,
    );
  }
  const now = cursor.deps.clock();
  if (deadline !== null && now >= Date.parse(deadline)) {
    return cursor.commit(
      (seq) => cursor.resolve(position, seq, "ok", { timedOut: true }, null),
      () => ({ timedOut: true }) as const,
    );
  }
  const nextPoll = now + toMilliseconds(options.every);
  const wakeAt = deadline === null ? nextPoll : Math.min(nextPoll, Date.parse(deadline));
  cursor.stop.park({ kind: "condition", name, position, ...(deadline ? { until: deadline } : {}) }, wakeAt);
  return cursor.parked();
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
  cause: number,
  entry: JournalEntry | undefined,
  options: WaitDeadline,
): Promise<string | null> {
  if (entry) return (entry.result as { deadline: string | null }).deadline;
  const deadline = cursor.deadlineOf(options);
  const result = { deadline };
  await cursor.append({
    position,
    kind,
    name,
    state: "pending",
    result,
    error: null,
    attempts: 1,
    seq: null,
    cause,
  });
  return deadline;
}
