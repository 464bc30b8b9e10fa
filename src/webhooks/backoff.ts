/**
 * Delay before retry `attempt` (the attempt that just failed, from 1), in ms: "full jitter", a
 * uniformly random delay in `[0, min(maxMs, baseMs × 2^(attempt-1))]`, so receivers recovering
 * from an outage are not hit by every retry at once. `random` is injected for tests.
 */
export function webhookRetryDelayMs(
  attempt: number,
  backoff: { baseMs: number; maxMs: number },
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(attempt - 1, 40));
  return Math.floor(random() * ceiling);
}
