import { formatGwei, type Hex } from "viem";
import { z } from "zod";
import type { ChainRef } from "../../values/index.js";
import type { BumpDecision, FeeRule, Fees } from "./fee-bump.js";
import { toWei } from "./node-steps.js";
import { txHash } from "./transaction-schemas.js";

/**
 * Why a stuck transaction was replaced, or why it could not be: journaled with each `bump:<round>`
 * step from version 4 of `chain.transaction` (docs/chains.md, "Fee bumps"), read back by the
 * console's execution page and by anyone reading the run's steps with payloads.
 */

const WEI = /^(0|[1-9][0-9]*)$/;
const Wei = z.string().regex(WEI, "must be a decimal integer string of wei");
const FeesWei = z.object({ maxFeePerGas: Wei, maxPriorityFeePerGas: Wei });
const FeeRuleSchema = z.enum(["bumpPercent", "nodeSuggestion", "priorityFee"]);

export const FeeBumpWhy = z.object({
  /** The rule that made the attempt count as stuck: no receipt `stuckAfterMs` after its broadcast. */
  trigger: z.literal("fees.stuckAfterMs"),
  stuckAfterMs: z.number().int().positive(),
  /** The attempt that was stuck (0 is the first signed payload) and its hash. */
  attempt: z.number().int().min(0),
  hash: txHash,
  /** Its fees, and what the node suggested when the bump was decided, in wei per gas. */
  previous: FeesWei,
  suggested: FeesWei,
  /** `fees.bumpPercent` as configured (nodes refuse less than 12.5, so less is raised to it). */
  bumpPercent: z.number(),
  /** On a replacement: the rule that set each new field. */
  raisedBy: z.object({ maxFeePerGas: FeeRuleSchema, maxPriorityFeePerGas: FeeRuleSchema }).optional(),
  /** When there is no replacement because of it: `fees.maxFeePerGasWei`. */
  capWei: Wei.optional(),
  /** The whole reason in one sentence, as the console shows it. */
  summary: z.string(),
});
export type FeeBumpWhy = z.infer<typeof FeeBumpWhy>;

/** A version-4 `bump:<round>` step's result as the journal holds it (fees in wei per gas). */
export const FeeBumpRecord = z.discriminatedUnion("replace", [
  z.object({ replace: z.literal(true), maxFeePerGas: Wei, maxPriorityFeePerGas: Wei, why: FeeBumpWhy }),
  z.object({ replace: z.literal(false), reason: z.string(), why: FeeBumpWhy }),
]);
export type FeeBumpRecord = z.infer<typeof FeeBumpRecord>;

/** The journal position name of a bump step: `bump:<round>`. */
export const BUMP_STEP = /^bump:\d+$/;

const RULE_WORDS: Record<FeeRule, string> = {
  bumpPercent: "fees.bumpPercent",
  nodeSuggestion: "the node's suggestion",
  priorityFee: "raised to the new priority fee",
};

/** Builds the record's `why` for a bump decided on `stuck` (the attempt) with the node's `suggested` fees. */
export function explainBump<C extends number>(
  chain: ChainRef<C>,
  stuck: { attempt: number; hash: Hex; fees: Fees<C> },
  suggested: Fees<C>,
  decision: BumpDecision<C>,
  rules: { stuckAfterMs: number; bumpPercent: number; maxFeePerGasWei?: string | undefined },
): FeeBumpWhy {
  const wei = (f: Fees<C>) => ({
    maxFeePerGas: toWei(chain, f.maxFeePerGas).toString(),
    maxPriorityFeePerGas: toWei(chain, f.maxPriorityFeePerGas).toString(),
  });
  const previous = wei(stuck.fees);
  const trigger = `attempt ${stuck.attempt} (${stuck.hash}) had no receipt ${rules.stuckAfterMs} ms after its broadcast (fees.stuckAfterMs)`;
  const common = {
    trigger: "fees.stuckAfterMs" as const,
    stuckAfterMs: rules.stuckAfterMs,
    attempt: stuck.attempt,
    hash: stuck.hash,
    previous,
    suggested: wei(suggested),
    bumpPercent: rules.bumpPercent,
  };
  if (!decision.replace) {
    return {
      ...common,
      ...(rules.maxFeePerGasWei !== undefined ? { capWei: rules.maxFeePerGasWei } : {}),
      summary: `${trigger}; no replacement: ${decision.reason}`,
    };
  }
  const next = wei(decision.fees);
  const field = (name: "maxFeePerGas" | "maxPriorityFeePerGas") =>
    `${name} ${gwei(previous[name])} → ${gwei(next[name])} gwei (${ruleWords(decision.raisedBy[name], rules.bumpPercent)})`;
  return {
    ...common,
    raisedBy: decision.raisedBy,
    summary: `${trigger}; replaced: ${field("maxFeePerGas")}, ${field("maxPriorityFeePerGas")}`,
  };
}

function ruleWords(rule: FeeRule, bumpPercent: number): string {
  return rule === "bumpPercent" ? `+${Math.max(bumpPercent, 12.5)} %, ${RULE_WORDS[rule]}` : RULE_WORDS[rule];
}

function gwei(wei: string): string {
  return formatGwei(BigInt(wei));
}
