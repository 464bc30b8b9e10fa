import { ValueError, ValueErrorCode } from "./errors.js";

/**
 * Rounding modes, named after what they do. There is no default anywhere in this module: every
 * operation that can produce a value finer than its output scale takes one of these explicitly.
 *
 * - `exact`: refuse with `VALUE_PRECISION_LOSS` unless the result is exact.
 * - `floor` / `ceil`: toward negative / positive infinity.
 * - `down` / `up`: toward / away from zero.
 * - `half-up` / `half-down`: to nearest; a tie goes away from / toward zero.
 * - `half-even`: to nearest; a tie goes to the even neighbour (banker's rounding).
 */
export const ROUNDING_MODES = [
  "exact",
  "floor",
  "ceil",
  "down",
  "up",
  "half-up",
  "half-down",
  "half-even",
] as const;

/** One of {@link ROUNDING_MODES}. */
export type RoundingMode = (typeof ROUNDING_MODES)[number];

/** Largest number of fraction digits any scale may have; 10^36 keeps every unit far inside uint256. */
export const MAX_SCALE = 36;

const POWERS_OF_TEN: bigint[] = Array.from({ length: 2 * MAX_SCALE + 1 }, (_, i) => 10n ** BigInt(i));

/** 10^exponent as a bigint, cached for the scales this module uses. */
export function pow10(exponent: number): bigint {
  return POWERS_OF_TEN[exponent] ?? 10n ** BigInt(exponent);
}

/**
 * Fails with `VALUE_INVALID_ROUNDING_MODE` unless `mode` is one of {@link ROUNDING_MODES}. Types
 * already guarantee this inside TypeScript; the runtime check protects untyped callers.
 */
export function assertRoundingMode(mode: unknown): asserts mode is RoundingMode {
  if (!(ROUNDING_MODES as readonly unknown[]).includes(mode)) {
    throw new ValueError(
      ValueErrorCode.INVALID_ROUNDING_MODE,
      `rounding mode ${JSON.stringify(String(mode))} is not one of ${ROUNDING_MODES.join(", ")}`,
      { mode: String(mode), allowed: [...ROUNDING_MODES] },
    );
  }
}

/** Fails with `VALUE_INVALID_SCALE` unless `scale` is an integer in 0..{@link MAX_SCALE}. */
export function assertScale(scale: unknown, what = "scale"): asserts scale is number {
  if (typeof scale !== "number" || !Number.isInteger(scale) || scale < 0 || scale > MAX_SCALE) {
    throw new ValueError(
      ValueErrorCode.INVALID_SCALE,
      `${what} must be an integer from 0 to ${MAX_SCALE}, got ${String(scale)}`,
      { what, scale: String(scale), max: MAX_SCALE },
    );
  }
}

/**
 * `numerator / denominator` rounded to an integer with `mode`. `context` names the operation in
 * the `VALUE_PRECISION_LOSS` message (for example "rescale USDC from 6 to 2 decimals").
 * Fails with `VALUE_DIVISION_BY_ZERO` for a zero denominator.
 */
export function divideRounded(
  numerator: bigint,
  denominator: bigint,
  mode: RoundingMode,
  context: string,
): bigint {
  assertRoundingMode(mode);
  if (denominator === 0n) {
    throw new ValueError(ValueErrorCode.DIVISION_BY_ZERO, `${context}: division by zero`, { context });
  }
  // Normalise so the denominator is positive; the sign of the quotient lives in the numerator.
  const n = denominator < 0n ? -numerator : numerator;
  const d = denominator < 0n ? -denominator : denominator;
  const truncated = n / d; // BigInt division truncates toward zero.
  const remainder = n % d; // Same sign as n.
  if (remainder === 0n) return truncated;
  if (mode === "exact") {
    throw new ValueError(
      ValueErrorCode.PRECISION_LOSS,
      `${context}: the result is not exact and the rounding mode is "exact"; name a rounding mode`,
      { context, rule: "exact" },
    );
  }
  const awayFromZero = truncated + (n < 0n ? -1n : 1n);
  switch (mode) {
    case "down":
      return truncated;
    case "up":
      return awayFromZero;
    case "floor":
      return n < 0n ? awayFromZero : truncated;
    case "ceil":
      return n > 0n ? awayFromZero : truncated;
    default:
      return roundHalf(truncated, awayFromZero, remainder, d, mode);
  }
}

function roundHalf(
  truncated: bigint,
  awayFromZero: bigint,
  remainder: bigint,
  denominator: bigint,
  mode: "half-up" | "half-down" | "half-even",
): bigint {
  const twice = 2n * (remainder < 0n ? -remainder : remainder);
  if (twice > denominator) return awayFromZero;
  if (twice < denominator) return truncated;
  if (mode === "half-up") return awayFromZero;
  if (mode === "half-down") return truncated;
  return truncated % 2n === 0n ? truncated : awayFromZero;
}

/**
 * Re-expresses `units` (an integer at `fromScale` fraction digits) at `toScale` fraction digits.
 * Widening is always exact; narrowing rounds with `mode` (`exact` refuses any loss).
 */
export function rescaleUnits(
  units: bigint,
  fromScale: number,
  toScale: number,
  mode: RoundingMode,
  context: string,
): bigint {
  assertRoundingMode(mode); // checked even when widening, so a missing mode never passes silently
  // The source scale may exceed MAX_SCALE (a product of two decimals); only the output is bounded.
  assertScale(toScale, "target scale");
  if (toScale >= fromScale) return units * pow10(toScale - fromScale);
  return divideRounded(units, pow10(fromScale - toScale), mode, context);
}
