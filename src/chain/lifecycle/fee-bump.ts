import { type ChainRef, GasPrice, Rational } from "../../values/index.js";

/** Both EIP-1559 fee fields of one signed attempt. */
export interface Fees<C extends number = number> {
  maxFeePerGas: GasPrice<C>;
  maxPriorityFeePerGas: GasPrice<C>;
}

/** Nodes (geth, anvil) refuse a replacement that raises either fee by less than 12.5 % (1250 bp). */
export const MIN_BUMP_BASIS_POINTS = 1_250n;

export type BumpDecision<C extends number> =
  | { replace: true; fees: Fees<C> }
  | { replace: false; reason: string };

/**
 * The fees of a replacement for a stuck transaction: both fields raised by at least `bumpPercent`
 * (never below 12.5 %, rounded up to the wei), and at least the node's current suggestion. The
 * cap on maxFeePerGas is honoured: when the minimum replacement would exceed it there is no
 * replacement (the caller surfaces the transaction to an operator), because a smaller bump would
 * only be refused by the node.
 */
export function bumpFees<C extends number>(
  previous: Fees<C>,
  suggested: Fees<C>,
  options: { bumpPercent: number; cap?: GasPrice<C> },
): BumpDecision<C> {
  const basisPoints = BigInt(Math.round(options.bumpPercent * 100));
  const factor = Rational.of(
    10_000n + (basisPoints < MIN_BUMP_BASIS_POINTS ? MIN_BUMP_BASIS_POINTS : basisPoints),
    10_000n,
  );
  const maxOf = (a: GasPrice<C>, b: GasPrice<C>) => (a.compare(b) >= 0 ? a : b);
  const priority = maxOf(previous.maxPriorityFeePerGas.times(factor, "ceil"), suggested.maxPriorityFeePerGas);
  let maxFee = maxOf(previous.maxFeePerGas.times(factor, "ceil"), suggested.maxFeePerGas);
  if (maxFee.compare(priority) < 0) maxFee = priority;
  if (options.cap && maxFee.compare(options.cap) > 0) {
    return {
      replace: false,
      reason: `a replacement needs maxFeePerGas ${describe(maxFee)}, above the cap ${describe(options.cap)}`,
    };
  }
  return { replace: true, fees: { maxFeePerGas: maxFee, maxPriorityFeePerGas: priority } };
}

function describe(price: GasPrice): string {
  return price.describe();
}

/** Parses the configured cap (wei per gas, a decimal integer string) on `chain`. */
export function feeCap<C extends number>(
  chain: ChainRef<C>,
  weiText: string | undefined,
): GasPrice<C> | undefined {
  return weiText === undefined ? undefined : GasPrice.parse(chain, weiText, "wei");
}
