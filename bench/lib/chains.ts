import { forEachLimit, nowMs } from "./concurrency.js";

/**
 * One workflow of `steps` steps on a system, as its client sees it: from the client's start call
 * until the client holds the checked result, in ms. Rejects when the result is missing or wrong.
 */
export type Chain = (steps: number) => Promise<number>;

export interface Batch {
  /** Each workflow's own sample (see {@link Chain}). */
  durations: number[];
  /** From the first start call to the last checked result. */
  wallMs: number;
}

/** `count` workflows started at once (W2); rejects with the first failure. */
export async function allAtOnce(count: number, steps: number, chain: Chain): Promise<Batch> {
  const started = nowMs();
  const durations = await Promise.all(Array.from({ length: count }, () => chain(steps)));
  return { durations, wallMs: nowMs() - started };
}

/** `count` workflows with at most `limit` in flight, each started when one finished (W2C). */
export async function withLimit(count: number, limit: number, steps: number, chain: Chain): Promise<Batch> {
  const durations: number[] = [];
  const started = nowMs();
  await forEachLimit(count, limit, async () => {
    durations.push(await chain(steps));
  });
  return { durations, wallMs: nowMs() - started };
}
