import { assertSameChain, type ChainRef, defineChain } from "./asset.js";
import { formatScaled, parseDecimalText } from "./decimal-text.js";
import { assertBigint, assertInRange, OpaqueValue } from "./opaque.js";
import type { Rational } from "./rational.js";
import type { RoundingMode } from "./rounding.js";

let readWei: (value: NativeValue) => bigint;
let construct: <C extends number>(chain: ChainRef<C>, wei: bigint) => NativeValue<C>;

/**
 * An amount of a chain's native currency (ETH on chain 1, POL on 137…), held as an integer of
 * its smallest unit ("wei": whole coins × 10^nativeCurrency.decimals) in a private bigint. `C` is
 * the chain id as a literal type: mixing chains is a compile-time error where the ids are literals
 * and a `VALUE_CHAIN_MISMATCH` refusal always. Range: uint256 (0..2^256-1), never negative.
 */
export class NativeValue<C extends number = number> extends OpaqueValue {
  /** The chain this value is bound to. */
  readonly chain: ChainRef<C>;
  readonly #wei: bigint;

  private constructor(chain: ChainRef<C>, wei: bigint) {
    super();
    this.chain = chain;
    this.#wei = wei;
  }

  static {
    readWei = (value) => value.#wei;
    construct = (chain, wei) => new NativeValue(chain, wei);
  }

  /** Zero on `chain`. */
  static zero<C extends number>(chain: ChainRef<C>): NativeValue<C> {
    return construct(defineChain(chain), 0n);
  }

  /**
   * Parses a decimal string of whole coins ("0.05") with the API grammar; at most
   * `nativeCurrency.decimals` fraction digits. Fails with the codes of `parseDecimalText`.
   */
  static parse<C extends number>(chain: ChainRef<C>, text: string): NativeValue<C> {
    const checked = defineChain(chain);
    const { symbol, decimals } = checked.nativeCurrency;
    return construct(
      checked,
      parseDecimalText(text, decimals, { what: `${symbol} value`, allowNegative: false }),
    );
  }

  /** Exact sum. Fails with `VALUE_CHAIN_MISMATCH` or `VALUE_OUT_OF_RANGE` (above uint256). */
  plus(other: NativeValue<C>): NativeValue<C> {
    assertSameChain(this.chain, other.chain, "add", "native value");
    return this.#derive(this.#wei + other.#wei);
  }

  /** Exact difference. Fails with `VALUE_CHAIN_MISMATCH`, or `VALUE_NEGATIVE` below zero. */
  minus(other: NativeValue<C>): NativeValue<C> {
    assertSameChain(this.chain, other.chain, "subtract", "native value");
    return this.#derive(this.#wei - other.#wei);
  }

  /** `this × factor` rounded to a whole wei with `rounding` (`exact` refuses any loss). */
  times(factor: Rational, rounding: RoundingMode): NativeValue<C> {
    return this.#derive(
      factor.applyTo(this.#wei, rounding, `multiply ${this.describe()} by ${factor.describe()}`),
    );
  }

  /** -1, 0 or 1 as this is less than, equal to or greater than `other`; same chain only. */
  compare(other: NativeValue<C>): -1 | 0 | 1 {
    assertSameChain(this.chain, other.chain, "compare", "native value");
    return this.#wei < other.#wei ? -1 : this.#wei > other.#wei ? 1 : 0;
  }

  /** Same chain and same quantity. Fails with `VALUE_CHAIN_MISMATCH` for another chain. */
  equals(other: NativeValue<C>): boolean {
    return this.compare(other) === 0;
  }

  isZero(): boolean {
    return this.#wei === 0n;
  }

  describe(): string {
    const { symbol, decimals } = this.chain.nativeCurrency;
    return `NativeValue(chain ${this.chain.id} ${formatScaled(this.#wei, decimals)} ${symbol})`;
  }

  #derive(wei: bigint): NativeValue<C> {
    assertInRange(wei, `${this.chain.nativeCurrency.symbol} value`, false);
    return construct(this.chain, wei);
  }
}

/** @internal Codec and formatter access to the wei; not exported from `index.ts`. */
export function nativeWei(value: NativeValue): bigint {
  return readWei(value);
}

/**
 * @internal Builds a native value from wei for the codecs and for `GasPrice.costFor`. Fails with
 * `VALUE_WRONG_TYPE`, `VALUE_NEGATIVE` or `VALUE_OUT_OF_RANGE` (outside uint256).
 */
export function nativeValueFromWei<C extends number>(chain: ChainRef<C>, wei: bigint): NativeValue<C> {
  const checked = defineChain(chain);
  assertBigint(wei, `${checked.nativeCurrency.symbol} wei`);
  assertInRange(wei, `${checked.nativeCurrency.symbol} value`, false);
  return construct(checked, wei);
}
