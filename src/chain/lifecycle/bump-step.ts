import type { Hex } from "viem";
import { z } from "zod";
import type { WorkflowContext } from "../../engine/context.js";
import type { ChainRef, GasPrice } from "../../values/index.js";
import { chainAccessService } from "./chain-access.js";
import { bumpFees, type Fees, feeCap } from "./fee-bump.js";
import { explainBump, FeeBumpWhy } from "./fee-bump-record.js";
import { estimateSchema, suggestFees } from "./node-steps.js";

/** The chain's `fees` settings as the `fee.rules` step journaled them. */
export interface FeeRules {
  bumpPercent: number;
  maxBumps: number;
  stuckAfterMs: number;
  maxFeePerGasWei?: string | undefined;
}

export type BumpOutcome<C extends number> =
  | { replace: true; maxFeePerGas: GasPrice<C>; maxPriorityFeePerGas: GasPrice<C> }
  | { replace: false; reason: string };

/**
 * The `bump:<round>` step: the fees of a replacement for the stuck attempt, or why there is none
 * (src/chain/lifecycle/fee-bump.ts). With `explain` (version 4 on) the step also journals why it
 * fired, the old and the node's suggested fees and the rule behind each new field (`why`,
 * src/chain/lifecycle/fee-bump-record.ts); earlier versions journal the decision alone.
 */
export async function bumpStep<C extends number>(
  ctx: WorkflowContext,
  round: number,
  options: {
    chainId: number;
    chain: ChainRef<C>;
    stuck: { attempt: number; hash: Hex; fees: Fees<C> };
    rules: FeeRules;
    explain: boolean;
  },
): Promise<BumpOutcome<C>> {
  const { chain, stuck, rules } = options;
  return ctx.step(
    `bump:${round}`,
    async () => {
      const node = ctx.service(chainAccessService).chains.get(options.chainId);
      const suggested = await suggestFees(node.public, chain);
      const d = bumpFees(stuck.fees, suggested, {
        bumpPercent: rules.bumpPercent,
        cap: feeCap(chain, rules.maxFeePerGasWei),
      });
      const decision = d.replace
        ? {
            replace: true as const,
            maxFeePerGas: d.fees.maxFeePerGas,
            maxPriorityFeePerGas: d.fees.maxPriorityFeePerGas,
          }
        : { replace: false as const, reason: d.reason };
      if (!options.explain) return decision;
      return { ...decision, why: explainBump(chain, stuck, suggested, d, rules) };
    },
    { schema: bumpSchema(chain, options.explain) },
  ) as Promise<BumpOutcome<C>>;
}

function bumpSchema<C extends number>(chain: ChainRef<C>, explain: boolean) {
  const fees = estimateSchema(chain).omit({ gas: true });
  const why = explain ? { why: FeeBumpWhy } : {};
  return z.discriminatedUnion("replace", [
    fees.extend({ replace: z.literal(true), ...why }),
    z.object({ replace: z.literal(false), reason: z.string(), ...why }),
  ]);
}
