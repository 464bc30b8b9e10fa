import { type ChainRef, GasPrice, Rational } from "../../values/index.js";

/** Both EIP-1559 fee fields of one signed attempt. */
export interface Fees<C extends number = number> {
  maxFeePerGas: GasPrice<C>;
  maxPriorityFeePerGas: GasPrice<C>;
}

/** Nodes (geth, anvil) refuse a replacement that raises either fee by less than 12.5 % (1250 bp). */
export const MIN_BUMP_BASIS_POINTS = 1_250n;

/**
 * The rule that set one field of a replacement: the configured raise (`fees.bumpPercent`, never
 * below 12.5 %), the node's higher suggestion, or, for maxFeePerGas only, the new priority fee
 * (a max fee below the tip is invalid).
 */
export type FeeRule = "bumpPercent" | "nodeSuggestion" | "priorityFee";

export type BumpDecision<C extends number> =
  | { replace: true; fees: Fees<C>; raisedBy: { maxFeePerGas: FeeRule; maxPriorityFeePerGas: FeeRule } }
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
  const raise = (old: GasPrice<C>, node: GasPrice<C>): [GasPrice<C>, FeeRule] => {
    const raised = old.times(factor, "ceil");
    return raised.compare(node) >= 0 ? [raised, "bumpPercent"] : [node, "nodeSuggestion"];
  };
  const [priority, priorityRule] = raise(previous.maxPriorityFeePerGas, suggested.maxPriorityFeePerGas);
  let [maxFee, maxFeeRule] = raise(previous.maxFeePerGas, suggested.maxFeePerGas);
  if (maxFee.compare(priority) < 0) [maxFee, maxFeeRule] = [priority, "priorityFee"];
  if (options.cap && maxFee.compare(options.cap) > 0) {
    return {
      replace: false,
      reason: `a replacement needs maxFeePerGas ${describe(maxFee)}, above the cap ${describe(options.cap)}`,
    };
  }
  return {
    replace: true,
    fees: { maxFeePerGas: maxFee, maxPriorityFeePerGas: priority },
    raisedBy: { maxFeePerGas: maxFeeRule, maxPriorityFeePerGas: priorityRule },
  };
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
