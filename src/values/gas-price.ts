import { assertSameChain, type ChainRef, defineChain } from "./asset.js";
import { formatScaled, parseDecimalText, parseIntegerText } from "./decimal-text.js";
import { type NativeValue, nativeValueFromWei } from "./native-value.js";
import { assertBigint, assertInRange, OpaqueValue } from "./opaque.js";
import type { Rational } from "./rational.js";
import type { RoundingMode } from "./rounding.js";

/** Gas prices are usually written in gwei: 1 gwei = 10^9 wei per gas. */
export const GWEI_DECIMALS = 9;

/** The units a gas price may be written in at the API: whole wei, or gwei with up to 9 decimals. */
export type GasPriceUnit = "wei" | "gwei";

let readWeiPerGas: (price: GasPrice) => bigint;
let construct: <C extends number>(chain: ChainRef<C>, weiPerGas: bigint) => GasPrice<C>;

/**
 * A price of gas on one chain, held as wei per unit of gas in a private bigint. A gas price only
 * means something on its own chain: `C` is the chain id as a literal type, so using one chain's
 * price on another is a compile-time error where the ids are literals and a
 * `VALUE_CHAIN_MISMATCH` refusal always. Range: uint256, never negative.
 */
export class GasPrice<C extends number = number> extends OpaqueValue {
  /** The chain this price is bound to. */
  readonly chain: ChainRef<C>;
  readonly #weiPerGas: bigint;

  private constructor(chain: ChainRef<C>, weiPerGas: bigint) {
    super();
    this.chain = chain;
    this.#weiPerGas = weiPerGas;
  }

  static {
    readWeiPerGas = (price) => price.#weiPerGas;
    construct = (chain, weiPerGas) => new GasPrice(chain, weiPerGas);
  }

  /** Zero on `chain`. */
  static zero<C extends number>(chain: ChainRef<C>): GasPrice<C> {
    return construct(defineChain(chain), 0n);
  }

  /**
   * Parses a gas price written in `unit` with the API grammar: an integer string for "wei", a
   * decimal string with at most 9 fraction digits for "gwei" ("1.5" gwei = 1500000000 wei).
   */
  static parse<C extends number>(chain: ChainRef<C>, text: string, unit: GasPriceUnit): GasPrice<C> {
    const rules = { what: `gas price (${unit})`, allowNegative: false };
    const weiPerGas =
      unit === "gwei" ? parseDecimalText(text, GWEI_DECIMALS, rules) : parseIntegerText(text, rules);
    return construct(defineChain(chain), weiPerGas);
  }

  /** Exact sum (base fee + priority fee). Fails with `VALUE_CHAIN_MISMATCH` or `VALUE_OUT_OF_RANGE`. */
  plus(other: GasPrice<C>): GasPrice<C> {
    assertSameChain(this.chain, other.chain, "add", "gas price");
    return this.#derive(this.#weiPerGas + other.#weiPerGas);
  }

  /** Exact difference. Fails with `VALUE_CHAIN_MISMATCH`, or `VALUE_NEGATIVE` below zero. */
  minus(other: GasPrice<C>): GasPrice<C> {
    assertSameChain(this.chain, other.chain, "subtract", "gas price");
    return this.#derive(this.#weiPerGas - other.#weiPerGas);
  }

  /** `this × factor` (a fee bump such as 9/8) rounded to a whole wei with `rounding`. */
  times(factor: Rational, rounding: RoundingMode): GasPrice<C> {
    const context = `multiply ${this.describe()} by ${factor.describe()}`;
    return this.#derive(factor.applyTo(this.#weiPerGas, rounding, context));
  }

  /**
   * The native value `gas` units cost at this price (exact; no rounding is involved). `gas` is a
   * count of gas units, a non-negative bigint. Fails with `VALUE_WRONG_TYPE`, `VALUE_NEGATIVE` or
   * `VALUE_OUT_OF_RANGE` when the cost exceeds uint256.
   */
  costFor(gas: bigint): NativeValue<C> {
    assertBigint(gas, "gas");
    assertInRange(gas, "gas", false);
    return nativeValueFromWei(this.chain, this.#weiPerGas * gas);
  }

  /** -1, 0 or 1 as this is less than, equal to or greater than `other`; same chain only. */
  compare(other: GasPrice<C>): -1 | 0 | 1 {
    assertSameChain(this.chain, other.chain, "compare", "gas price");
    return this.#weiPerGas < other.#weiPerGas ? -1 : this.#weiPerGas > other.#weiPerGas ? 1 : 0;
  }

  /** Same chain and same price. Fails with `VALUE_CHAIN_MISMATCH` for another chain. */
  equals(other: GasPrice<C>): boolean {
    return this.compare(other) === 0;
  }

  isZero(): boolean {
    return this.#weiPerGas === 0n;
  }

  describe(): string {
    return `GasPrice(chain ${this.chain.id} ${formatScaled(this.#weiPerGas, GWEI_DECIMALS)} gwei)`;
  }

  #derive(weiPerGas: bigint): GasPrice<C> {
    assertInRange(weiPerGas, "gas price", false);
    return construct(this.chain, weiPerGas);
  }
}

/** @internal Codec and formatter access to wei per gas; not exported from `index.ts`. */
export function gasPriceWeiPerGas(price: GasPrice): bigint {
  return readWeiPerGas(price);
}

/**
 * @internal Builds a gas price from wei per gas for the codecs. Fails with `VALUE_WRONG_TYPE`,
 * `VALUE_NEGATIVE` or `VALUE_OUT_OF_RANGE` (outside uint256).
 */
export function gasPriceFromWei<C extends number>(chain: ChainRef<C>, weiPerGas: bigint): GasPrice<C> {
  const checked = defineChain(chain);
  assertBigint(weiPerGas, "gas price wei");
  assertInRange(weiPerGas, "gas price", false);
  return construct(checked, weiPerGas);
}
