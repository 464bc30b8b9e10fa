/**
 * Percentiles and ratios computed from recorded samples. Pure functions: no I/O, no clock,
 * so test/bench can check them exactly.
 */

/**
 * The `p`-th percentile (0–100) of `samples` by linear interpolation between closest ranks
 * (the same definition as NumPy's default). Returns NaN for an empty list; does not modify
 * `samples`.
 */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  if (p < 0 || p > 100) throw new RangeError(`percentile ${p} is outside 0–100`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const lowValue = sorted[low] as number;
  const highValue = sorted[high] as number;
  return lowValue + (highValue - lowValue) * (rank - low);
}

/** p50, p99, min, max, mean and count of a sample list (NaN figures when it is empty). */
export interface Summary {
  count: number;
  min: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(samples: readonly number[]): Summary {
  const count = samples.length;
  const sum = samples.reduce((a, b) => a + b, 0);
  return {
    count,
    min: count ? Math.min(...samples) : Number.NaN,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    max: count ? Math.max(...samples) : Number.NaN,
    mean: count ? sum / count : Number.NaN,
  };
}

/** The median of a list; NaN when empty. */
export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

/** `a / b`, or null when either is missing, not finite, or `b` is zero. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined || b === null || b === undefined) return null;
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return null;
  return a / b;
}

/** Rounds to `digits` significant decimals for reports; non-finite values pass through as null. */
export function round(value: number, digits = 3): number | null {
  if (!Number.isFinite(value)) return null;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
