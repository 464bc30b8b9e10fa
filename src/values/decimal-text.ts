import { ValueError, ValueErrorCode } from "./errors.js";
import { assertInRange } from "./opaque.js";
import { pow10 } from "./rounding.js";

/**
 * The text grammar shared by the API and journal codecs. Decimal strings are
 * `-?(0|[1-9][0-9]*)(\.[0-9]+)?` and integer strings `-?(0|[1-9][0-9]*)`: no plus sign, no
 * whitespace, no group separators, no leading zeros, no bare or trailing dot, no exponent, no
 * negative zero. Each refusal has its own code so a client can be told exactly what to fix.
 */

const DECIMAL = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;
const INTEGER = /^-?(0|[1-9][0-9]*)$/;
const EXPONENT = /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)[eE][+-]?[0-9]*$/;
/** Longest text worth converting: 78 digits hold 2^256, the rest is sign, dot and fraction. */
const MAX_TEXT_LENGTH = 78 + 1 + 1 + 36;

/** What a decimal or integer string may contain, and how to name it in errors. */
export interface TextRules {
  /** Field or quantity named in error messages, for example "USDC amount". */
  readonly what: string;
  /** Whether a leading "-" is accepted; when false a negative fails with `VALUE_NEGATIVE`. */
  readonly allowNegative: boolean;
}

/**
 * Parses a decimal string into an integer of units at `maxFractionDigits` (so "1250.5" with 6
 * gives 1250500000n). Fails with `VALUE_EMPTY`, `VALUE_EXPONENT_NOTATION`, `VALUE_INVALID_DECIMAL`,
 * `VALUE_NEGATIVE`, `VALUE_TOO_MANY_DECIMALS` or `VALUE_OUT_OF_RANGE` (|units| > 2^256-1).
 */
export function parseDecimalText(text: unknown, maxFractionDigits: number, rules: TextRules): bigint {
  const { coefficient, scale } = parseDecimalTextAtOwnScale(text, rules);
  if (scale > maxFractionDigits) {
    throw new ValueError(
      ValueErrorCode.TOO_MANY_DECIMALS,
      `${rules.what} "${String(text)}" has ${scale} decimals; at most ${maxFractionDigits} are allowed`,
      { what: rules.what, value: String(text), decimals: scale, maxDecimals: maxFractionDigits },
    );
  }
  const units = coefficient * pow10(maxFractionDigits - scale);
  assertInRange(units, rules.what, rules.allowNegative);
  return units;
}

/**
 * Parses a decimal string keeping the scale it was written with ("1.50" is 150 at scale 2).
 * Same refusals as {@link parseDecimalText} except `VALUE_TOO_MANY_DECIMALS`.
 */
export function parseDecimalTextAtOwnScale(
  text: unknown,
  rules: TextRules,
): { coefficient: bigint; scale: number } {
  checkCommonShape(text, rules, "decimal");
  if (!DECIMAL.test(text)) {
    throw new ValueError(
      ValueErrorCode.INVALID_DECIMAL,
      `${rules.what} "${text}" is not a decimal string: ${explain(text)}`,
      { what: rules.what, value: text, rule: "-?(0|[1-9][0-9]*)(.[0-9]+)?" },
    );
  }
  const [whole = "", fraction = ""] = text.replace("-", "").split(".");
  const magnitude = BigInt(whole + fraction);
  checkSign(text, magnitude, rules);
  const coefficient = text.startsWith("-") ? -magnitude : magnitude;
  assertInRange(coefficient, rules.what, rules.allowNegative);
  return { coefficient, scale: fraction.length };
}

/**
 * Parses an integer string ("1000000"). Fails with `VALUE_EMPTY`, `VALUE_EXPONENT_NOTATION`,
 * `VALUE_INVALID_INTEGER` (including any fraction), `VALUE_NEGATIVE` or `VALUE_OUT_OF_RANGE`.
 */
export function parseIntegerText(text: unknown, rules: TextRules): bigint {
  checkCommonShape(text, rules, "integer");
  if (!INTEGER.test(text)) {
    const hint = DECIMAL.test(text) ? "a fraction is not allowed here (base units are whole)" : explain(text);
    throw new ValueError(
      ValueErrorCode.INVALID_INTEGER,
      `${rules.what} "${text}" is not an integer string: ${hint}`,
      { what: rules.what, value: text, rule: "-?(0|[1-9][0-9]*)" },
    );
  }
  const magnitude = BigInt(text.replace("-", ""));
  checkSign(text, magnitude, rules);
  const value = text.startsWith("-") ? -magnitude : magnitude;
  assertInRange(value, rules.what, rules.allowNegative);
  return value;
}

/** Writes `units` at `scale` as the shortest decimal string: 1250500000n at 6 gives "1250.5". */
export function formatScaled(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction === "" ? "" : `.${fraction}`}`;
}

function checkCommonShape(text: unknown, rules: TextRules, kind: string): asserts text is string {
  if (typeof text !== "string") {
    throw new ValueError(
      ValueErrorCode.WRONG_TYPE,
      `${rules.what} must be a ${kind} string, got ${typeof text}`,
      { what: rules.what, type: typeof text },
    );
  }
  if (text === "") {
    throw new ValueError(ValueErrorCode.EMPTY, `${rules.what} is empty; expected a ${kind} string`, {
      what: rules.what,
    });
  }
  if (EXPONENT.test(text)) {
    throw new ValueError(
      ValueErrorCode.EXPONENT_NOTATION,
      `${rules.what} "${text}" uses exponent notation; write every digit`,
      { what: rules.what, value: text },
    );
  }
  if (text.length > MAX_TEXT_LENGTH) {
    throw new ValueError(
      ValueErrorCode.OUT_OF_RANGE,
      `${rules.what} is ${text.length} characters long; no value in range needs more than ${MAX_TEXT_LENGTH}`,
      { what: rules.what, length: text.length },
    );
  }
}

function checkSign(text: string, magnitude: bigint, rules: TextRules): void {
  if (!text.startsWith("-")) return;
  if (magnitude === 0n) {
    throw new ValueError(
      ValueErrorCode.INVALID_DECIMAL,
      `${rules.what} "${text}" is negative zero; write 0`,
      {
        what: rules.what,
        value: text,
        rule: "no negative zero",
      },
    );
  }
  if (!rules.allowNegative) {
    throw new ValueError(ValueErrorCode.NEGATIVE, `${rules.what} "${text}" is negative; this field is >= 0`, {
      what: rules.what,
      value: text,
      rule: "non-negative",
    });
  }
}

/** Names the first grammar rule `text` breaks, for the error message. */
function explain(text: string): string {
  if (/\s/.test(text)) return "whitespace is not allowed";
  if (text.startsWith("+")) return "an explicit plus sign is not allowed";
  if (/[,_' ]/.test(text)) return "group separators are not allowed";
  if (/^-?\./.test(text) || /\.$/.test(text)) return "a dot needs digits on both sides";
  if (/^-?0[0-9]/.test(text)) return "leading zeros are not allowed";
  return "only digits, one optional leading '-' and one '.' are allowed";
}
