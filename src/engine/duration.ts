import { TenorError } from "../errors/tenor-error.js";
import { ENGINE_ERRORS } from "./error-codes.js";

/** A duration as milliseconds, or a string such as "250ms", "30s", "5m", "24h", "7d". */
export type Duration = number | `${number}${"ms" | "s" | "m" | "h" | "d"}`;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Converts a Duration to whole milliseconds; refuses negatives, fractions of a millisecond and typos. */
export function toMilliseconds(duration: Duration): number {
  if (typeof duration === "number") {
    if (Number.isInteger(duration) && duration >= 0) return duration;
  } else {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(duration);
    if (match) {
      const ms = Number(match[1]) * (UNIT_MS[match[2] as string] as number);
      if (Number.isInteger(ms)) return ms;
    }
  }
  throw new TenorError(
    ENGINE_ERRORS.DURATION_INVALID,
    `duration ${JSON.stringify(duration)} must be whole non-negative milliseconds or a string like "30s", "5m", "24h"`,
    { details: { value: duration } },
  );
}
