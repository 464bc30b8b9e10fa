import { TenorError } from "../errors/tenor-error.js";

/**
 * Every error code the value boundary raises, in one place. Codes are stable strings: callers,
 * problem+json bodies and journal records match on them, so never reword or renumber one.
 */
export const ValueErrorCode = {
  /** Two amounts of different assets met in one operation. */
  ASSET_MISMATCH: "VALUE_ASSET_MISMATCH",
  /** Two chain-bound values (native value, gas price) of different chains met in one operation. */
  CHAIN_MISMATCH: "VALUE_CHAIN_MISMATCH",
  /** A result is not exactly representable at the requested scale and the rounding mode was `exact`. */
  PRECISION_LOSS: "VALUE_PRECISION_LOSS",
  /** Text is not a decimal string of the documented grammar. */
  INVALID_DECIMAL: "VALUE_INVALID_DECIMAL",
  /** Text is not an integer string of the documented grammar. */
  INVALID_INTEGER: "VALUE_INVALID_INTEGER",
  /** The input string is empty. */
  EMPTY: "VALUE_EMPTY",
  /** The input uses exponent notation ("1e6"), which the boundary never accepts. */
  EXPONENT_NOTATION: "VALUE_EXPONENT_NOTATION",
  /** The input has more fraction digits than the asset or field allows. */
  TOO_MANY_DECIMALS: "VALUE_TOO_MANY_DECIMALS",
  /** A negative value where the field or operation does not allow one. */
  NEGATIVE: "VALUE_NEGATIVE",
  /** A value outside its range (uint256 for chain values, |x| <= 2^256-1 for the others). */
  OUT_OF_RANGE: "VALUE_OUT_OF_RANGE",
  /** A chain input is not a hex quantity or a 32-byte ABI word. */
  INVALID_HEX: "VALUE_INVALID_HEX",
  /** Text is not a 0x-prefixed 20-byte address. */
  INVALID_ADDRESS: "VALUE_INVALID_ADDRESS",
  /** A JavaScript value of the wrong type (for example a `number` where a bigint is required). */
  WRONG_TYPE: "VALUE_WRONG_TYPE",
  /** An asset descriptor is malformed (id grammar, decimals outside 0..36). */
  INVALID_ASSET: "VALUE_INVALID_ASSET",
  /** A chain descriptor is malformed (id not a positive safe integer, bad native decimals). */
  INVALID_CHAIN: "VALUE_INVALID_CHAIN",
  /** A scale (number of fraction digits) outside 0..36 or not an integer. */
  INVALID_SCALE: "VALUE_INVALID_SCALE",
  /** A recorded scale differs from the scale of the asset or chain it is decoded for. */
  SCALE_MISMATCH: "VALUE_SCALE_MISMATCH",
  /** A rounding mode that is not one of `ROUNDING_MODES`. */
  INVALID_ROUNDING_MODE: "VALUE_INVALID_ROUNDING_MODE",
  /** A rational factor with a zero denominator. */
  DIVISION_BY_ZERO: "VALUE_DIVISION_BY_ZERO",
  /** A journal record matches none of the shapes in the versioned table. */
  UNKNOWN_JOURNAL_SHAPE: "VALUE_UNKNOWN_JOURNAL_SHAPE",
  /** An opaque value was serialised or coerced implicitly (JSON.stringify, `+a`, `a < b`). */
  IMPLICIT_CONVERSION: "VALUE_IMPLICIT_CONVERSION",
} as const;

/** One of the stable codes in {@link ValueErrorCode}. */
export type ValueErrorCode = (typeof ValueErrorCode)[keyof typeof ValueErrorCode];

declare module "../errors/error-code-registry.js" {
  interface ErrorCodeRegistry {
    values: ValueErrorCode;
  }
}

/**
 * The only error the value boundary throws on purpose. Never retryable: the same input fails the
 * same way. `details` names the rule and the offending value (as a string, never a `number`).
 */
export class ValueError extends TenorError<ValueErrorCode> {
  constructor(code: ValueErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(code, message, { retryable: false, details });
  }
}

/** True when `thrown` is a {@link ValueError}, optionally with the given code. */
export function isValueError(thrown: unknown, code?: ValueErrorCode): thrown is ValueError {
  return thrown instanceof ValueError && (code === undefined || thrown.code === code);
}
