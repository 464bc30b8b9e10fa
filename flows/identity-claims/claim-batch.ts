import { type Address, encodeFunctionData, getAddress } from "viem";
import { ClaimRegistry } from "../../src/chain/contracts/artifacts.js";
import { chainAccessService } from "../../src/chain/lifecycle/chain-access.js";
import type { WorkflowContext } from "../../src/engine/context.js";
import type { Duration } from "../../src/engine/duration.js";
import { BusinessError } from "../../src/engine/errors.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { writeContract } from "../support/chain-writes.js";
import { inspectRegistry, readPresentClaims, readWriteEffect } from "./chain-reads.js";
import { IDENTITY_CLAIM_ERRORS as E } from "./errors.js";
import {
  type Claim,
  ClaimBatchInput,
  ClaimBatchOutput,
  type ClaimOutcome,
  claimKey,
  claimsHash,
  normaliseClaims,
  type WriteSummary,
} from "./schemas.js";

/**
 * `identity.claim-batch` (docs/identity-claims.md): M-of-N approval bound to the hash of exactly
 * which claims go to which registry, then the claims in writes of `batchSize`. Before each write a
 * step records which claims of the batch are already on chain; only the missing ones are sent, and
 * the receipt says which of those this write added (a claim another writer added meanwhile is
 * skipped by the contract and recorded `already-present`). The organisation is `ctx.orgId` (the
 * caller's API key); nothing in the input names one.
 */
export const claimBatch = defineWorkflow({
  name: "identity.claim-batch",
  version: 1,
  input: ClaimBatchInput,
  output: ClaimBatchOutput,
  services: [chainAccessService],
  async run(ctx, input) {
    const claims = normaliseClaims(input.claims);
    const registry = getAddress(input.registry);
    const total = claims.length;
    ctx.progress({ phase: "checking", done: 0, total });
    const facts = await ctx.step("registry.inspect", () =>
      inspectRegistry(ctx, ctx.orgId, input.chainId, registry, input.signerId),
    );
    const where = { chainId: input.chainId, registry, signerId: input.signerId, signer: facts.signer };
    if (facts.signerScope === "platform") {
      throw new BusinessError(
        E.CLAIM_SIGNER_NOT_ORGANISATION,
        `signer ${input.signerId} is a platform signer: claims are issued under a signer of the organisation`,
        where,
      );
    }
    if (facts.registry === "no-code") {
      throw new BusinessError(
        E.CLAIM_REGISTRY_NOT_FOUND,
        `no contract at registry ${registry} on chain ${input.chainId}`,
        where,
      );
    }
    if (facts.registry === "not-a-claim-registry") {
      throw new BusinessError(
        E.CLAIM_REGISTRY_INVALID,
        `the contract at ${registry} on chain ${input.chainId} does not answer as a ClaimRegistry`,
        where,
      );
    }
    if (!facts.signerCanIssue) throw notWritable(where, facts.owner);

    const batches = Math.ceil(total / input.batchSize);
    const params = {
      chainId: input.chainId,
      registry,
      signerId: input.signerId,
      signer: facts.signer,
      count: total,
      claimsHash: claimsHash(claims),
      batchSize: input.batchSize,
      batches,
    };
    ctx.progress({ phase: "approval", done: 0, total });
    const decision = await ctx.waitForApproval("claims", {
      params,
      quorum: input.quorum,
      timeout: input.approvalTimeout as Duration,
    });
    if (decision.timedOut) {
      throw new BusinessError(
        E.APPROVAL_EXPIRED,
        `no approval of ${total} claims for ${registry} within ${input.approvalTimeout}; nothing was written`,
        { ...params, approvalTimeout: input.approvalTimeout },
      );
    }
    if (!decision.approved) {
      throw new BusinessError(
        E.APPROVAL_REJECTED,
        `${decision.rejectedBy.name} rejected ${total} claims for ${registry}; nothing was written`,
        { ...params, rejectedBy: decision.rejectedBy.name, reason: decision.reason },
      );
    }

    const outcomes: ClaimOutcome[] = [];
    const summaries: WriteSummary[] = [];
    for (let b = 0; b < batches; b++) {
      const batch = claims.slice(b * input.batchSize, (b + 1) * input.batchSize);
      const summary = await writeBatch(ctx, b, batch, where, outcomes);
      summaries.push(summary);
      ctx.progress({
        phase: "writing",
        batch: b + 1,
        batches,
        done: outcomes.length,
        total,
        written: count(outcomes, "written"),
        alreadyPresent: count(outcomes, "already-present"),
      });
    }
    return {
      ...params,
      written: count(outcomes, "written"),
      alreadyPresent: count(outcomes, "already-present"),
      approvedBy: decision.approvers.map((a) => a.name),
      writes: summaries,
      claims: outcomes,
    };
  },
});

interface Target {
  chainId: number;
  registry: Address;
  signerId: string;
  signer: Address;
}

/** One batch: read what is there, write the rest, read what the write did. Appends to `outcomes`. */
async function writeBatch(
  ctx: WorkflowContext,
  b: number,
  batch: readonly Claim[],
  target: Target,
  outcomes: ClaimOutcome[],
): Promise<WriteSummary> {
  const present = await ctx.step(`batch:${b}.present`, () =>
    readPresentClaims(ctx, target.chainId, target.registry, target.signer, batch),
  );
  const missing = batch.filter((_, i) => present.onChain[i] === null);
  if (missing.length > 0 && !present.signerCanIssue) {
    // Checked again: a revoked issuer would make the write revert at gas estimation.
    throw notWritable(target, undefined, b);
  }
  const after = new Map<Claim, `0x${string}` | null>();
  let transaction: string | null = null;
  let added = new Set<string>();
  if (missing.length > 0) {
    const tx = await writeContract(ctx, `batch:${b}.write`, {
      chainId: target.chainId,
      signerId: target.signerId,
      to: target.registry,
      data: encodeFunctionData({
        abi: ClaimRegistry.abi,
        functionName: "addClaims",
        args: [
          missing.map((c) => c.subject),
          missing.map((c) => BigInt(c.topic)),
          missing.map((c) => c.dataHash),
        ],
      }),
    });
    transaction = tx.hash;
    const effect = await ctx.step(`batch:${b}.effect`, () =>
      readWriteEffect(ctx, target.chainId, target.registry, tx.hash, missing),
    );
    added = new Set(effect.added);
    missing.forEach((c, i) => {
      after.set(c, effect.onChain[i] ?? null);
    });
  }
  batch.forEach((claim, i) => {
    const mine = transaction !== null && added.has(claimKey(claim));
    const onChain = mine ? claim.dataHash : (present.onChain[i] ?? after.get(claim) ?? null);
    outcomes.push({
      ...claim,
      outcome: mine ? "written" : "already-present",
      transaction: mine ? transaction : null,
      onChainDataHash: onChain,
      dataMatches: onChain === claim.dataHash,
    });
  });
  return {
    batch: b,
    from: batch[0]?.index ?? 0,
    count: batch.length,
    sent: missing.length,
    written: added.size,
    transaction,
  };
}

function notWritable(where: Target, owner?: Address, batch?: number): BusinessError {
  return new BusinessError(
    E.CLAIM_REGISTRY_NOT_WRITABLE,
    `signer ${String(where.signerId)} (${String(where.signer)}) may not add claims to ${String(where.registry)}: it is neither the registry's owner nor one of its issuers`,
    { ...where, ...(owner ? { owner } : {}), ...(batch !== undefined ? { batch } : {}) },
  );
}

function count(outcomes: readonly ClaimOutcome[], outcome: ClaimOutcome["outcome"]): number {
  return outcomes.filter((o) => o.outcome === outcome).length;
}
