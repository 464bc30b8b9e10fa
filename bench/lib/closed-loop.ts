import { forEachLimit, nowMs } from "./concurrency.js";

/** One client call: its latency in ms, or what went wrong (counted, never thrown). */
export type CallOutcome = { ms: number } | { error: string };

/** Latencies of the calls that succeeded, counts of those that did not, and the wall time. */
export interface LoopResult {
  durations: number[];
  errors: Record<string, number>;
  /** Up to three example messages per error kind, for the report's details. */
  examples: Record<string, string[]>;
  wallMs: number;
}

/**
 * `count` calls driven by `clients` closed-loop clients, each making its next call when its last
 * one answered (as API clients drive a service). A call that throws fails the loop; one that
 * resolves with `{ error }` is counted under that kind and the loop goes on.
 */
export async function closedLoop(
  count: number,
  clients: number,
  call: () => Promise<CallOutcome>,
): Promise<LoopResult> {
  const result: LoopResult = { durations: [], errors: {}, examples: {}, wallMs: 0 };
  const started = nowMs();
  await forEachLimit(count, clients, async () => record(result, await call()));
  result.wallMs = nowMs() - started;
  return result;
}

/**
 * Clients call continuously for `warmupMs + windowMs`; only calls that finish inside the window
 * (after the warm-up) count, so neither the ramp-up nor the drain at the end is in the figure.
 * `onWindow` runs when the window opens and resolves with what it measured when it closes.
 */
export async function windowedLoop<T>(options: {
  clients: number;
  warmupMs: number;
  windowMs: number;
  call: () => Promise<CallOutcome>;
  onWindow: () => Promise<() => Promise<T>>;
}): Promise<LoopResult & { during: T }> {
  const result: LoopResult = { durations: [], errors: {}, examples: {}, wallMs: options.windowMs };
  const opens = nowMs() + options.warmupMs;
  const closes = opens + options.windowMs;
  let failure: unknown = null;
  const lanes = Array.from({ length: options.clients }, async () => {
    while (failure === null && nowMs() < closes) {
      try {
        const outcome = await options.call();
        const at = nowMs();
        if (at >= opens && at <= closes) record(result, outcome);
      } catch (error) {
        failure ??= error;
      }
    }
  });
  const measured = (async () => {
    await new Promise((resolve) => setTimeout(resolve, options.warmupMs));
    const close = await options.onWindow();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, closes - nowMs())));
    return close();
  })();
  const [during] = await Promise.all([measured, Promise.all(lanes)]);
  if (failure !== null) throw failure;
  return { ...result, during };
}

function record(result: LoopResult, outcome: CallOutcome): void {
  if ("ms" in outcome) {
    result.durations.push(outcome.ms);
    return;
  }
  const kind = outcome.error.split(":")[0] as string;
  result.errors[kind] = (result.errors[kind] ?? 0) + 1;
  const examples = result.examples[kind] ?? [];
  if (examples.length < 3) result.examples[kind] = [...examples, outcome.error];
}

/** Sum of every error kind's count. */
export function errorCount(result: Pick<LoopResult, "errors">): number {
  return Object.values(result.errors).reduce((a, b) => a + b, 0);
}
