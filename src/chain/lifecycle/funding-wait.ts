import type { Address } from "viem";
import type { WorkflowContext } from "../../engine/context.js";
import { BusinessError } from "../../engine/errors.js";
import { CHAIN_ERRORS } from "../chain-error-codes.js";
import { FundedSignal } from "./transaction-schemas.js";

/** Who pays a write's gas: the sender's balance, or a paymaster's deposit in the EntryPoint. */
export type FundingDestination =
  | { kind: "balance"; address: Address }
  | { kind: "entryPointDeposit"; entryPoint: Address; account: Address };

/** What a funding request states: who must hold how much, and what it held when asked (wei). */
export interface FundingFacts {
  destination: FundingDestination;
  requiredWei: string;
  availableWei: string;
  shortfallWei: string;
}

export interface FundingRequest {
  chainId: number;
  /** The signal the confirmation watcher sends once the destination holds `requiredWei`. */
  signal: string;
  facts: FundingFacts;
  /** The request's `fundingDeadline`; without one the write fails at once (`verdict: rejected`). */
  deadline: string | undefined;
  /** Milestone shown while waiting: 1 before any broadcast, 2 once an attempt was submitted. */
  milestone: 1 | 2;
  /** Facts of why the wait began (the refused attempt's hash and step), shown with the wait. */
  cause?: Record<string, unknown>;
}

/**
 * The gas-funding pause (docs/chains.md): status waiting, kind `funding`, name `gas`, until the
 * confirmation watcher finds the destination holding `requiredWei` (it then signals `signal`).
 * Fails GAS_REQUIRED naming the shortfall: `verdict: rejected` when the request has no deadline,
 * `verdict: expired` when none arrives before it.
 */
export async function awaitGasFunding(ctx: WorkflowContext, request: FundingRequest): Promise<void> {
  const { facts, deadline } = request;
  const shortfall = facts.shortfallWei;
  if (!deadline)
    throw new BusinessError(CHAIN_ERRORS.GAS_REQUIRED, `the payer lacks ${shortfall} wei for this write`, {
      ...facts,
      ...request.cause,
      verdict: "rejected",
    });
  ctx.progress({ milestone: request.milestone, stage: "waiting for gas funding", funding: facts });
  const funded = await ctx.waitForSignal(request.signal, {
    schema: FundedSignal,
    deadline: new Date(deadline),
    presentAs: {
      kind: "funding",
      name: "gas",
      details: {
        chainId: request.chainId,
        signal: request.signal,
        ...facts,
        deadline,
        // What the rest of this write should cost at today's fees; informative, not added to the threshold.
        remainingEstimateWei: facts.requiredWei,
        ...request.cause,
      },
    },
  });
  if (funded.timedOut)
    throw new BusinessError(
      CHAIN_ERRORS.GAS_REQUIRED,
      `no gas funding of ${shortfall} wei before ${deadline}`,
      {
        ...facts,
        ...request.cause,
        verdict: "expired",
      },
    );
}
