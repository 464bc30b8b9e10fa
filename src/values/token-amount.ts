import { type Asset, assertSameAsset, defineAsset } from "./asset.js";
import type { Decimal } from "./decimal.js";
import { formatScaled, parseDecimalText } from "./decimal-text.js";
import { assertBigint, assertInRange, OpaqueValue } from "./opaque.js";
import { Rational } from "./rational.js";
import { pow10, type RoundingMode } from "./rounding.js";

/** Sign policy for operations that may produce a negative token amount. */
export interface SignOptions {
  /**
   * Accept a negative result (a ledger delta, a signed adjustment). Default `false`: a negative
   * result fails with `VALUE_NEGATIVE`, so balances and transfer amounts can never go below zero
   * by accident.
   */
  readonly allowNegative?: boolean;
}

let readUnits: (amount: TokenAmount) => bigint;
let construct: <A extends string>(asset: Asset<A>, units: bigint) => TokenAmount<A>;

/**
 * A quantity of one asset, held as an integer of base units (whole tokens × 10^decimals) in a
 * private bigint. `A` is the asset id as a literal type: mixing assets is a compile-time error
 * where the ids are literals and a `VALUE_ASSET_MISMATCH` refusal always.
 *
 * Range: |base units| <= 2^256-1. Non-negative unless an operation is given `allowNegative`
 * (see {@link SignOptions}); amounts that came from a signed source keep their sign.
 */
export class TokenAmount<A extends string = string> extends OpaqueValue {
  /** The asset this amount is measured in. */
  readonly asset: Asset<A>;
  readonly #units: bigint;

  private constructor(asset: Asset<A>, units: bigint) {
    super();
    this.asset = asset;
    this.#units = units;
  }

  static {
    readUnits = (amount) => amount.#units;
    construct = (asset, units) => new TokenAmount(asset, units);
  }

  /** Zero of `asset`. */
  static zero<A extends string>(asset: Asset<A>): TokenAmount<A> {
    return construct(defineAsset(asset), 0n);
  }

  /**
   * Parses a decimal string of whole tokens ("1250.5") with the API grammar; at most
   * `asset.decimals` fraction digits. Fails with the codes of `parseDecimalText`.
   */
  static parse<A extends string>(asset: Asset<A>, text: string, options: SignOptions = {}): TokenAmount<A> {
    const checked = defineAsset(asset);
    const what = `${checked.symbol} amount`;
    const allowNegative = options.allowNegative ?? false;
    return construct(checked, parseDecimalText(text, checked.decimals, { what, allowNegative }));
  }

  /** Sum of `amounts` (zero when empty); every amount must be of `asset`. */
  static sum<A extends string>(asset: Asset<A>, amounts: readonly TokenAmount<A>[]): TokenAmount<A> {
    return amounts.reduce((total, amount) => total.plus(amount), TokenAmount.zero(asset));
  }

  /** Exact sum. Fails with `VALUE_ASSET_MISMATCH` or `VALUE_OUT_OF_RANGE`. */
  plus(other: TokenAmount<A>): TokenAmount<A> {
    assertSameAsset(this.asset, other.asset, "add");
    return this.#derive(this.#units + other.#units, this.#units < 0n || other.#units < 0n);
  }

  /**
   * Exact difference. Fails with `VALUE_ASSET_MISMATCH`, or `VALUE_NEGATIVE` when the result is
   * below zero and `allowNegative` is not set.
   */
  minus(other: TokenAmount<A>, options: SignOptions = {}): TokenAmount<A> {
    assertSameAsset(this.asset, other.asset, "subtract");
    return this.#derive(this.#units - other.#units, options.allowNegative ?? false);
  }

  /**
   * `this × factor` rounded to a whole base unit with `rounding` (`exact` refuses any loss).
   * A negative factor needs `allowNegative`.
   */
  times(factor: Rational, rounding: RoundingMode, options: SignOptions = {}): TokenAmount<A> {
    const context = `multiply ${this.describe()} by ${factor.describe()}`;
    return this.#derive(factor.applyTo(this.#units, rounding, context), options.allowNegative ?? false);
  }

  /**
   * Converts into `target` at `rate` (units of `target` per whole unit of this asset), rounding
   * to a base unit of `target` with `rounding`. `Decimal.ONE` re-expresses the same value at the
   * target's scale (a bridged token with different decimals).
   */
  convertAt<B extends string>(rate: Decimal, target: Asset<B>, rounding: RoundingMode): TokenAmount<B> {
    const checked = defineAsset(target);
    const factor = rate.toRational().times(Rational.of(pow10(checked.decimals), pow10(this.asset.decimals)));
    const context = `convert ${this.describe()} to ${checked.id} at ${rate.describe()}`;
    const units = factor.applyTo(this.#units, rounding, context);
    assertInRange(units, `${checked.symbol} amount`, this.#units < 0n || rate.isNegative());
    return construct(checked, units);
  }

  /** -1, 0 or 1 as this is less than, equal to or greater than `other`; same asset only. */
  compare(other: TokenAmount<A>): -1 | 0 | 1 {
    assertSameAsset(this.asset, other.asset, "compare");
    return this.#units < other.#units ? -1 : this.#units > other.#units ? 1 : 0;
  }

  /** Same asset and same quantity. Fails with `VALUE_ASSET_MISMATCH` for another asset. */
  equals(other: TokenAmount<A>): boolean {
    return this.compare(other) === 0;
  }

  isZero(): boolean {
    return this.#units === 0n;
  }

  isNegative(): boolean {
    return this.#units < 0n;
  }

  isPositive(): boolean {
    return this.#units > 0n;
  }

  describe(): string {
    return `TokenAmount(${this.asset.id} ${formatScaled(this.#units, this.asset.decimals)})`;
  }

  #derive(units: bigint, allowNegative: boolean): TokenAmount<A> {
    assertInRange(units, `${this.asset.symbol} amount`, allowNegative);
    return construct(this.asset, units);
  }
}

/**
 * @internal Codec and formatter access to the base units. Not exported from `index.ts`: domain
 * code never reads the raw scalar.
 */
export function tokenUnits(amount: TokenAmount): bigint {
  return readUnits(amount);
}

/**
 * @internal Builds an amount from base units for the codecs. Fails with `VALUE_WRONG_TYPE`,
 * `VALUE_NEGATIVE` (unless `allowNegative`) or `VALUE_OUT_OF_RANGE`.
 */
export function tokenAmountFromUnits<A extends string>(
  asset: Asset<A>,
  units: bigint,
  options: SignOptions = {},
): TokenAmount<A> {
  const checked = defineAsset(asset);
  assertBigint(units, `${checked.symbol} base units`);
  assertInRange(units, `${checked.symbol} amount`, options.allowNegative ?? false);
  return construct(checked, units);
}
