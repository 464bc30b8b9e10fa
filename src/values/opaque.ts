import { ValueError, ValueErrorCode } from "./errors.js";

/** 2^256 - 1: the largest uint256, the range of every chain value and the magnitude cap of the rest. */
export const UINT256_MAX = 2n ** 256n - 1n;

/**
 * Base of every unit-bearing value. The scalar lives in a `#private` field of the subclass, so
 * domain code cannot read it; this class also closes the implicit exits through which it could
 * leak or be silently lost:
 *
 * - `JSON.stringify(value)` throws `VALUE_IMPLICIT_CONVERSION` (it would otherwise write `{}` into
 *   a journal or a response); use the journal, API or chain codec instead.
 * - numeric coercion (`+a`, `a + b`, `a < b`) throws the same code; use the named operations.
 * - string coercion and `util.inspect` give a debug description, never a boundary shape.
 */
export abstract class OpaqueValue {
  /** A debug description such as `TokenAmount(usdc 1250.5)`; not a boundary encoding. */
  abstract describe(): string;

  toString(): string {
    return this.describe();
  }

  toJSON(): never {
    throw new ValueError(
      ValueErrorCode.IMPLICIT_CONVERSION,
      `${this.describe()} cannot be serialised implicitly; encode it with its API, journal or chain codec`,
      { value: this.describe(), rule: "codec-only serialisation" },
    );
  }

  [Symbol.toPrimitive](hint: string): string {
    if (hint === "string") return this.describe();
    throw new ValueError(
      ValueErrorCode.IMPLICIT_CONVERSION,
      `${this.describe()} cannot be coerced to a ${hint === "number" ? "number" : "primitive"}; use its named operations`,
      { value: this.describe(), rule: "no numeric coercion" },
    );
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.describe();
  }
}

/**
 * Fails with `VALUE_WRONG_TYPE` unless `value` is a bigint. Guards untyped callers so that a
 * JavaScript `number` can never become an amount.
 */
export function assertBigint(value: unknown, what: string): asserts value is bigint {
  if (typeof value !== "bigint") {
    throw new ValueError(
      ValueErrorCode.WRONG_TYPE,
      `${what} must be a bigint, got ${typeof value}; amounts never travel as JavaScript numbers`,
      { what, type: typeof value },
    );
  }
}

/**
 * Fails unless `-UINT256_MAX <= value <= UINT256_MAX` (or `0 <= value` when `allowNegative` is
 * false): `VALUE_NEGATIVE` for a forbidden sign, `VALUE_OUT_OF_RANGE` for the magnitude.
 */
export function assertInRange(value: bigint, what: string, allowNegative: boolean): void {
  if (value < 0n && !allowNegative) {
    throw new ValueError(ValueErrorCode.NEGATIVE, `${what} must not be negative, got ${value}`, {
      what,
      value: value.toString(),
      rule: "non-negative",
    });
  }
  if (value > UINT256_MAX || value < -UINT256_MAX) {
    throw new ValueError(
      ValueErrorCode.OUT_OF_RANGE,
      `${what} is out of range: its magnitude exceeds 2^256-1 (got ${value.toString().length} digits)`,
      { what, value: value.toString(), rule: "|x| <= 2^256-1" },
    );
  }
}
