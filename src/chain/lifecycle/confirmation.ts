import type { WorkflowContext } from "../../engine/context.js";
import { FinalitySignal, InclusionSignal } from "./transaction-schemas.js";

/** Details of a `confirmation` wait, read by the confirmation watcher (src/chain/watcher). */
export interface InclusionWaitDetails {
  stage: "inclusion";
  chainId: number;
  /** The signal the watcher delivers when one of `hashes` has a receipt. */
  signal: string;
  hashes: string[];
  /** Set when the transaction is stuck and no replacement is allowed: an operator decides. */
  operatorAttention?: { code: string; reason: string };
}

export interface FinalityWaitDetails {
  stage: "finality";
  chainId: number;
  signal: string;
  hash: string;
  blockHash: string;
  blockNumber: string;
}

export type Inclusion =
  | { timedOut: true }
  | { timedOut: false; hash: `0x${string}`; blockNumber: string; blockHash: `0x${string}` };

/** Waits (durably) until the watcher sees a receipt for one of `hashes`, or `timeoutMs` passes. */
export async function waitForInclusion(
  ctx: WorkflowContext,
  round: number,
  details: Omit<InclusionWaitDetails, "stage" | "signal">,
  timeoutMs: number | undefined,
): Promise<Inclusion> {
  const signal = `inclusion:${round}`;
  const result = await ctx.waitForSignal(signal, {
    schema: InclusionSignal,
    ...(timeoutMs !== undefined ? { timeout: `${timeoutMs}ms` as const } : {}),
    presentAs: {
      kind: "confirmation",
      name: "inclusion",
      details: { stage: "inclusion", signal, ...details },
    },
  });
  if (result.timedOut) return { timedOut: true };
  return {
    timedOut: false,
    hash: result.payload.hash,
    blockNumber: result.payload.blockNumber,
    blockHash: result.payload.blockHash,
  };
}

/** Waits until the included receipt is final (its status), or a reorg removed it. */
export async function waitForFinality(
  ctx: WorkflowContext,
  round: number,
  details: Omit<FinalityWaitDetails, "stage" | "signal">,
) {
  const signal = `finality:${round}`;
  const result = await ctx.waitForSignal(signal, {
    schema: FinalitySignal,
    presentAs: { kind: "confirmation", name: "finality", details: { stage: "finality", signal, ...details } },
  });
  if (result.timedOut) throw new Error("a finality wait has no deadline");
  return result.payload;
}
