import { formatScaled, parseDecimalText } from "./decimal-text.js";
import { assertBigint, assertInRange, OpaqueValue } from "./opaque.js";
import { Rational } from "./rational.js";
import { assertScale, pow10, type RoundingMode, rescaleUnits } from "./rounding.js";

let readCoefficient: (value: Decimal) => bigint;
let construct: (coefficient: bigint, scale: number) => Decimal;

/**
 * A signed decimal with an explicit scale, for prices, rates and ratios: the value is
 * `coefficient / 10^scale`, with an integer coefficient (|coefficient| <= 2^256-1) and a scale of
 * 0..36 fraction digits. It carries no unit; amounts use `TokenAmount`, `NativeValue` and
 * `GasPrice`. Every operation whose exact result could be finer than its output names the output
 * scale and a rounding mode.
 */
export class Decimal extends OpaqueValue {
  /** Fraction digits of this value; part of its identity in the journal ("1.50" keeps scale 2). */
  readonly scale: number;
  readonly #coefficient: bigint;

  private constructor(coefficient: bigint, scale: number) {
    super();
    this.#coefficient = coefficient;
    this.scale = scale;
  }

  static {
    readCoefficient = (value) => value.#coefficient;
    construct = (coefficient, scale) => {
      assertScale(scale, "decimal scale");
      assertInRange(coefficient, "decimal coefficient", true);
      return new Decimal(coefficient, scale);
    };
  }

  /** Exactly 1 at scale 0: the identity rate. */
  static readonly ONE: Decimal = new Decimal(1n, 0);

  /** Zero at `scale`. Fails with `VALUE_INVALID_SCALE` outside 0..36. */
  static zero(scale: number): Decimal {
    return construct(0n, scale);
  }

  /**
   * Parses a decimal string ("1.0825") into a value at exactly `scale` fraction digits; at most
   * `scale` digits may be written. Negative values need `allowNegative` (default false).
   */
  static parse(text: string, scale: number, options: { allowNegative?: boolean } = {}): Decimal {
    assertScale(scale, "decimal scale");
    const allowNegative = options.allowNegative ?? false;
    return construct(parseDecimalText(text, scale, { what: "decimal", allowNegative }), scale);
  }

  /** Exact sum, at the larger of the two scales. */
  plus(other: Decimal): Decimal {
    const scale = Math.max(this.scale, other.scale);
    return construct(this.#at(scale) + other.#at(scale), scale);
  }

  /** Exact difference, at the larger of the two scales. */
  minus(other: Decimal): Decimal {
    const scale = Math.max(this.scale, other.scale);
    return construct(this.#at(scale) - other.#at(scale), scale);
  }

  /** `this × other` at `scale`, rounded with `rounding` (`exact` refuses any loss). */
  times(other: Decimal, scale: number, rounding: RoundingMode): Decimal {
    const product = this.#coefficient * other.#coefficient;
    const context = `multiply ${this.describe()} by ${other.describe()} at scale ${scale}`;
    return construct(rescaleUnits(product, this.scale + other.scale, scale, rounding, context), scale);
  }

  /** The same value at `scale`; widening is exact, narrowing rounds with `rounding`. */
  rescale(scale: number, rounding: RoundingMode): Decimal {
    const context = `rescale ${this.describe()} to scale ${scale}`;
    return construct(rescaleUnits(this.#coefficient, this.scale, scale, rounding, context), scale);
  }

  /** -1, 0 or 1 by numeric value; scales may differ ("1.5" equals "1.50"). */
  compare(other: Decimal): -1 | 0 | 1 {
    const scale = Math.max(this.scale, other.scale);
    const left = this.#at(scale);
    const right = other.#at(scale);
    return left < right ? -1 : left > right ? 1 : 0;
  }

  /** Numeric equality; use `.scale` as well when the written precision matters. */
  equals(other: Decimal): boolean {
    return this.compare(other) === 0;
  }

  isZero(): boolean {
    return this.#coefficient === 0n;
  }

  isNegative(): boolean {
    return this.#coefficient < 0n;
  }

  /** The exact value as a factor for `TokenAmount.times` and friends. */
  toRational(): Rational {
    return Rational.fromScaled(this.#coefficient, this.scale);
  }

  describe(): string {
    return `Decimal(${formatScaled(this.#coefficient, this.scale)} @${this.scale})`;
  }

  #at(scale: number): bigint {
    return this.#coefficient * pow10(scale - this.scale);
  }
}

/** @internal Codec and formatter access to the coefficient; not exported from `index.ts`. */
export function decimalCoefficient(value: Decimal): bigint {
  return readCoefficient(value);
}

/**
 * @internal Builds a decimal from its coefficient and scale for the codecs. Fails with
 * `VALUE_WRONG_TYPE`, `VALUE_INVALID_SCALE` or `VALUE_OUT_OF_RANGE`.
 */
export function decimalFromCoefficient(coefficient: bigint, scale: number): Decimal {
  assertBigint(coefficient, "decimal coefficient");
  return construct(coefficient, scale);
}
