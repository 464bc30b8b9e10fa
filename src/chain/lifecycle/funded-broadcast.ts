import type { Address, Hex } from "viem";
import { z } from "zod";
import type { WorkflowContext } from "../../engine/context.js";
import { TenorError } from "../../errors/tenor-error.js";
import { CHAIN_ERRORS } from "../chain-error-codes.js";
import { chainAccessService } from "./chain-access.js";
import { awaitGasFunding } from "./funding-wait.js";
import { type BroadcastOutcome, broadcast } from "./node-steps.js";

/** Nodes lag behind a funding: a refused broadcast is retried a few times first. */
export const BROADCAST_RETRY = { attempts: 5, initialDelayMs: 200, maxDelayMs: 2_000 };

/**
 * What a broadcast step journals from `chain.transaction` version 3: the node's answer, or, once
 * the retries above all met "insufficient funds", that refusal with the payer's balance then.
 */
const FundedBroadcastSchema = z.union([
  z.enum(["sent", "known", "nonce-used", "underpriced"]),
  z.object({ refused: z.literal("insufficient-funds"), availableWei: z.string() }),
]);

export interface FundedBroadcast {
  chainId: number;
  /** The step's name (`broadcast:<i>`, `rebroadcast:<round>`); rounds after funding add `:funded:<n>`. */
  step: string;
  signed: { raw: Hex; hash: Hex };
  /** The sender, who pays: gas × the attempt's maxFeePerGas + value. */
  payer: Address;
  requiredWei: bigint;
  fundingDeadline: string | undefined;
  milestone: 1 | 2;
}

/**
 * Broadcasts one signed attempt; a node that refuses it for insufficient funds (the payer drained
 * after `funding.check`, or while an earlier attempt sat in the mempool) turns into the funding
 * wait of `funding.check`, naming the payer and what this attempt needs. Once funded the same bytes
 * are broadcast again (same nonce, never re-signed); with no `fundingDeadline` the write fails
 * GAS_REQUIRED instead, and nonce recovery fills its nonce (docs/chains.md).
 */
export async function broadcastFunded(
  ctx: WorkflowContext,
  request: FundedBroadcast,
): Promise<BroadcastOutcome> {
  for (let round = 0; ; round++) {
    const step = round === 0 ? request.step : `${request.step}:funded:${round}`;
    const outcome = await ctx.step(step, (info) => sendOrRefusal(ctx, request, info.attempt), {
      retry: BROADCAST_RETRY,
      schema: FundedBroadcastSchema,
    });
    if (typeof outcome === "string") return outcome;
    const available = BigInt(outcome.availableWei);
    const shortfall = request.requiredWei > available ? request.requiredWei - available : 0n;
    await awaitGasFunding(ctx, {
      chainId: request.chainId,
      signal: `funding:${step}`,
      deadline: request.fundingDeadline,
      milestone: request.milestone,
      facts: {
        destination: { kind: "balance", address: request.payer },
        requiredWei: request.requiredWei.toString(),
        availableWei: outcome.availableWei,
        shortfallWei: shortfall.toString(),
      },
      cause: { refusedHash: request.signed.hash, refusedStep: step },
    });
  }
}

/** One try: the node's answer; on the last try, an insufficient-funds refusal with the balance. */
async function sendOrRefusal(
  ctx: WorkflowContext,
  request: FundedBroadcast,
  attempt: number,
): Promise<z.infer<typeof FundedBroadcastSchema>> {
  const node = ctx.service(chainAccessService).chains.get(request.chainId).public;
  try {
    return await broadcast(node, request.signed);
  } catch (error) {
    const refused = error instanceof TenorError && error.code === CHAIN_ERRORS.GAS_REQUIRED;
    if (!refused || attempt < BROADCAST_RETRY.attempts) throw error;
    const balance = await node.getBalance({ address: request.payer });
    return { refused: "insufficient-funds", availableWei: balance.toString() };
  }
}
