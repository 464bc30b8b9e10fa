import { ValueError, ValueErrorCode } from "./errors.js";
import { assertBigint, OpaqueValue } from "./opaque.js";
import { divideRounded, pow10, type RoundingMode } from "./rounding.js";

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

/**
 * An exact rational factor (numerator / denominator, always reduced, denominator > 0), used to
 * scale amounts: fee shares, bumps of 9/8, prices turned into factors. Applying one to an amount
 * names a rounding mode.
 *
 * Factors are computation-only: they have no API, journal or chain codec, and serialising one
 * (`JSON.stringify`) fails with `VALUE_IMPLICIT_CONVERSION`. Record the inputs they came from
 * (a `Decimal` rate, an integer basis-point count) instead.
 */
export class Rational extends OpaqueValue {
  readonly #numerator: bigint;
  readonly #denominator: bigint;

  private constructor(numerator: bigint, denominator: bigint) {
    super();
    this.#numerator = numerator;
    this.#denominator = denominator;
  }

  /**
   * `numerator / denominator` (default 1n), reduced. Fails with `VALUE_WRONG_TYPE` for a
   * non-bigint and `VALUE_DIVISION_BY_ZERO` for a zero denominator.
   */
  static of(numerator: bigint, denominator = 1n): Rational {
    assertBigint(numerator, "rational numerator");
    assertBigint(denominator, "rational denominator");
    if (denominator === 0n) {
      throw new ValueError(
        ValueErrorCode.DIVISION_BY_ZERO,
        `rational ${numerator}/0 has a zero denominator`,
        {
          numerator: numerator.toString(),
        },
      );
    }
    const sign = denominator < 0n ? -1n : 1n;
    const divisor = gcd(numerator, denominator);
    return new Rational((sign * numerator) / divisor, (sign * denominator) / divisor);
  }

  /** `coefficient / 10^scale`: the exact value of a scaled decimal. */
  static fromScaled(coefficient: bigint, scale: number): Rational {
    return Rational.of(coefficient, pow10(scale));
  }

  /** `basisPoints / 10000`, the usual way fee shares are configured. */
  static fromBasisPoints(basisPoints: bigint): Rational {
    return Rational.of(basisPoints, 10_000n);
  }

  /** Exact product of two factors. */
  times(other: Rational): Rational {
    return Rational.of(this.#numerator * other.#numerator, this.#denominator * other.#denominator);
  }

  /** Exact reciprocal. Fails with `VALUE_DIVISION_BY_ZERO` for zero. */
  reciprocal(): Rational {
    return Rational.of(this.#denominator, this.#numerator);
  }

  /** -1, 0 or 1 as this factor is less than, equal to or greater than `other`. */
  compare(other: Rational): -1 | 0 | 1 {
    const left = this.#numerator * other.#denominator;
    const right = other.#numerator * this.#denominator;
    return left < right ? -1 : left > right ? 1 : 0;
  }

  /** True when this factor is below zero. */
  isNegative(): boolean {
    return this.#numerator < 0n;
  }

  /**
   * `units × this`, rounded to an integer with `mode`; `context` is named in a
   * `VALUE_PRECISION_LOSS` error. Used by the amount kinds; the units never leave this module.
   */
  applyTo(units: bigint, mode: RoundingMode, context: string): bigint {
    return divideRounded(units * this.#numerator, this.#denominator, mode, context);
  }

  describe(): string {
    return `Rational(${this.#numerator}/${this.#denominator})`;
  }
}
