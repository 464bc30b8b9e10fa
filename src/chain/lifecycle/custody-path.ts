import type { Address, Hex } from "viem";
import { z } from "zod";
import type { WorkflowContext } from "../../engine/context.js";
import { BusinessError } from "../../engine/errors.js";
import { TenorError } from "../../errors/tenor-error.js";
import { type ChainRef, chainAddress } from "../../values/index.js";
import { CHAIN_ERRORS } from "../chain-error-codes.js";
import type { CustodyIntent, CustodySigner, CustodyState } from "../signers/signer.js";
import { chainAccessService } from "./chain-access.js";
import { waitForFinality, waitForInclusion } from "./confirmation.js";
import { parseValue, valueWei } from "./node-steps.js";
import type { TransactionRequest, TransactionResult } from "./transaction-schemas.js";
import { reportIndexed } from "./wait-for-indexed.js";

/**
 * Consecutive polls that find an organisation-scoped intent approved yet never broadcast before it
 * counts as silently dropped and is submitted again under a new external id.
 */
export const DROPPED_AFTER_POLLS = 5;

const CustodyStateSchema = z.custom<CustodyState>(
  (v) => typeof v === "object" && v !== null && "status" in v,
);

/**
 * The custody path of the lifecycle (docs/chains.md, "Custody providers"): the provider signs, owns the
 * nonce and broadcasts; Tenor submits an intent under a stable external id and follows its status.
 */
export async function runCustodyIntent(
  ctx: WorkflowContext,
  input: TransactionRequest,
  chain: ChainRef<number>,
  from: Address,
  data: Hex,
): Promise<TransactionResult> {
  const signer = () =>
    ctx.service(chainAccessService).signers.forOrg(ctx.orgId, input.signerId) as CustodySigner;
  const budget = await ctx.step("custody.settings", () => ({
    pollBudget: signer().pollBudget,
    pollIntervalMs: signer().pollIntervalMs,
    scope: signer().scope,
  }));
  let polls = 0;
  for (let resubmission = 0; ; resubmission++) {
    const intent: CustodyIntent = {
      externalId: resubmission === 0 ? ctx.executionId : `${ctx.executionId}:r${resubmission}`,
      chainId: input.chainId,
      to: chainAddress(input.to, "to"),
      data,
      valueWei: valueWei(chain, parseValue(chain, input.valueWei)).toString(),
    };
    let state = await ctx.step(`custody.submit:${resubmission}`, () => submitReconciled(signer(), intent), {
      schema: CustodyStateSchema,
    });
    let approvedPolls = 0;
    for (;;) {
      if (state.status === "rejected" || state.status === "failed") {
        throw new BusinessError(
          CHAIN_ERRORS.CUSTODY_REJECTED,
          `custody provider rejected the intent: ${state.reason}`,
          {
            reason: state.reason,
            externalId: intent.externalId,
            verdict: "rejected",
          },
        );
      }
      if (state.status === "broadcast" || state.status === "confirmed") {
        ctx.progress({ milestone: 2, stage: "submitted", hash: state.txHash, externalId: intent.externalId });
        return confirm(ctx, input, from, state.txHash);
      }
      approvedPolls = state.status === "approved" ? approvedPolls + 1 : 0;
      if (approvedPolls >= DROPPED_AFTER_POLLS && budget.scope === "organisation") break;
      if (++polls > budget.pollBudget) {
        throw new BusinessError(
          CHAIN_ERRORS.CUSTODY_POLL_BUDGET_EXHAUSTED,
          `custody intent ${intent.externalId} did not settle within ${budget.pollBudget} polls`,
          { externalId: intent.externalId, lastStatus: state.status, verdict: "expired" },
        );
      }
      ctx.progress({ milestone: 1, stage: `custody ${state.status}`, externalId: intent.externalId });
      await ctx.sleep(`custody.poll:${polls}`, `${budget.pollIntervalMs}ms`);
      state = await ctx.step(`custody.status:${polls}`, () => signer().status(intent.externalId), {
        schema: CustodyStateSchema,
      });
    }
    ctx.progress({ milestone: 1, stage: "custody intent dropped by the provider; submitting again" });
  }
}

/**
 * Submits after asking for the intent's current status (an earlier turn may have submitted it and
 * lost the answer). A submit that fails in doubt is reconciled by external id; when the provider
 * cannot answer that either, the original failure stands (retryable), never the reconciliation's.
 */
async function submitReconciled(signer: CustodySigner, intent: CustodyIntent): Promise<CustodyState> {
  const current = await signer.status(intent.externalId);
  if (current.status !== "unknown") return current;
  try {
    return await signer.submit(intent);
  } catch (error) {
    if (!(error instanceof TenorError) || error.code !== CHAIN_ERRORS.CUSTODY_UNAVAILABLE) throw error;
    const known = await signer.status(intent.externalId).catch(() => undefined);
    if (known && known.status !== "unknown") return known;
    throw error;
  }
}

async function confirm(
  ctx: WorkflowContext,
  input: TransactionRequest,
  from: Address,
  hash: Hex,
): Promise<TransactionResult> {
  for (let round = 0; ; round++) {
    const included = await waitForInclusion(
      ctx,
      round,
      { chainId: input.chainId, hashes: [hash] },
      undefined,
    );
    if (included.timedOut) continue;
    ctx.progress({ milestone: 3, stage: "included", hash, blockNumber: included.blockNumber });
    const finality = await waitForFinality(ctx, round, { chainId: input.chainId, ...included });
    if (finality.outcome === "reorged") continue;
    const verdict = finality.status === "success" ? ("confirmed" as const) : ("reverted" as const);
    ctx.progress({ milestone: 3, stage: "final", hash, verdict });
    if (input.readAfterWrite)
      await reportIndexed(ctx, { chainId: input.chainId, blockNumber: included.blockNumber, hash, verdict });
    return {
      verdict,
      hash,
      from,
      nonce: null,
      blockNumber: included.blockNumber,
      blockHash: included.blockHash,
      attempts: 1,
    };
  }
}
