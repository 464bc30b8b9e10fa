/** Immediate retries of a step's transient failures, before the execution is suspended. */
export interface RetryPolicy {
  /** Total attempts including the first. Default 3. */
  attempts?: number;
  /** Delay before the second attempt, in ms. Default 100. */
  initialDelayMs?: number;
  /** Growth factor per attempt. Default 2. */
  factor?: number;
  /** Cap on one delay, in ms. Default 5000. */
  maxDelayMs?: number;
  /** Random spread of each delay, 0–1 (0.2 = ±20 %), so retries of many executions do not align. Default 0.2. */
  jitter?: number;
}

export type ResolvedRetryPolicy = Required<RetryPolicy>;

export const DEFAULT_RETRY_POLICY: ResolvedRetryPolicy = Object.freeze({
  attempts: 3,
  initialDelayMs: 100,
  factor: 2,
  maxDelayMs: 5_000,
  jitter: 0.2,
});

/** Applies defaults and checks bounds once, when the step is called. */
export function resolveRetryPolicy(policy: RetryPolicy | undefined): ResolvedRetryPolicy {
  const resolved = { ...DEFAULT_RETRY_POLICY, ...policy };
  if (!Number.isInteger(resolved.attempts) || resolved.attempts < 1) {
    throw new RangeError(`retry.attempts ${resolved.attempts} must be an integer ≥ 1`);
  }
  if (resolved.jitter < 0 || resolved.jitter > 1)
    throw new RangeError(`retry.jitter ${resolved.jitter} must be within 0–1`);
  return resolved;
}

/** Delay before attempt `attempt + 1` (attempt counts from 1), with jitter, capped. */
export function backoffDelayMs(
  policy: Pick<ResolvedRetryPolicy, "initialDelayMs" | "factor" | "maxDelayMs" | "jitter">,
  attempt: number,
  random: () => number = Math.random,
): number {
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.factor ** (attempt - 1));
  const spread = base * policy.jitter * (random() * 2 - 1);
  return Math.max(0, Math.round(Math.min(policy.maxDelayMs, base + spread)));
}
