import { z } from "zod";
import { chainAccessService } from "../../src/chain/lifecycle/chain-access.js";
import { indexedHeightsService, waitForIndexed } from "../../src/chain/lifecycle/wait-for-indexed.js";
import type { WorkflowContext } from "../../src/engine/context.js";
import type { Duration } from "../../src/engine/duration.js";
import { toMilliseconds } from "../../src/engine/duration.js";
import { BusinessError } from "../../src/engine/errors.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import {
  type Asset,
  addressText,
  type ChainAddress,
  chainAddress,
  defineAsset,
  isValueError,
  TokenAmount,
  tokenAmountApi,
  tokenAmountUint256,
} from "../../src/values/index.js";
import { deployContract, deploymentAddress, writeContract } from "../support/chain-writes.js";
import {
  approveCall,
  batchId,
  distributeCall,
  distributorInitCode,
  distributorSalt,
  readAllowance,
  readBatchState,
  readTokenFacts,
} from "./distributor.js";
import { batchesOf, computeEntitlements, type Entitlements } from "./entitlements.js";
import { CORPORATE_ACTION_ERRORS as ERRORS } from "./errors.js";
import { holderSnapshotsService } from "./ports.js";
import { findRecordHeight, recordDateSettled } from "./record-height.js";
import { CorporateActionInput, CorporateActionOutput } from "./schemas.js";

/**
 * A coupon or dividend distribution (docs/corporate-actions.md): record date → record height →
 * the Ledger Index's holder snapshot at that height → entitlements with a named rounding policy
 * and a recorded residue → M-of-N approval of the payout's hash → payment in keyed batches through
 * the payer's Distributor, each batch one lifecycle write that pauses for gas funding instead of
 * failing, with progress per batch.
 */
export const corporateActionDistribution = defineWorkflow({
  name: "corporate-action.distribute",
  version: 1,
  input: CorporateActionInput,
  output: CorporateActionOutput,
  services: [chainAccessService, indexedHeightsService, holderSnapshotsService],
  async run(ctx, input): Promise<CorporateActionOutput> {
    ctx.progress({ phase: "record" });
    const paymentToken = chainAddress(input.paymentToken, "paymentToken");
    const facts = await ctx.step("facts", async () => ({
      asset: await readTokenFacts(ctx, input.chainId, chainAddress(input.asset, "asset")),
      payment: await readTokenFacts(ctx, input.chainId, paymentToken),
      payer: addressText(
        ctx.service(chainAccessService).signers.forOrg(ctx.orgId, input.payerSignerId).address,
      ),
    }));
    const asset = tokenAsset(input.chainId, input.asset, facts.asset);
    const payment = tokenAsset(input.chainId, input.paymentToken, facts.payment);
    const declared = parseDeclared(payment, input.amount);
    const payer = chainAddress(facts.payer, "payer");

    const record = await resolveRecordHeight(ctx, input.chainId, new Date(input.recordDate));
    const indexed = await waitForIndexed(ctx, input.chainId, record.height, { timeout: "1h" });
    if (!indexed.indexed) {
      throw new BusinessError(ERRORS.NOT_INDEXED, `the Ledger Index did not reach block ${record.height}`, {
        chainId: input.chainId,
        recordHeight: record.height,
      });
    }
    const snapshot = await ctx.step("snapshot", () =>
      ctx.service(holderSnapshotsService).holdersAt({
        chainId: input.chainId,
        orgId: ctx.orgId,
        token: input.asset,
        height: BigInt(record.height),
      }),
    );
    if (!snapshot.tracked) {
      throw new BusinessError(
        ERRORS.TOKEN_NOT_TRACKED,
        `asset ${input.asset} is not tracked by this organisation at block ${record.height}`,
        {
          field: "asset",
          value: input.asset,
          rule: "must be an erc20 the organisation tracks in the Ledger Index",
        },
      );
    }
    const distributorAddress = predictedDistributor(ctx.orgId, payer);
    const excluded = new Set([payer, distributorAddress, ...input.excluded].map(addressText));
    const holders = snapshot.holders.filter((h) => !excluded.has(h.holder));
    if (holders.length === 0) {
      throw new BusinessError(
        ERRORS.NO_HOLDERS,
        `no entitled holder of ${input.asset} at block ${record.height}`,
        {
          recordHeight: record.height,
        },
      );
    }
    const entitlements = computeEntitlements(declared, asset, holders, input.rounding);
    const batches = batchesOf(entitlements.entitled, input.batchSize);

    ctx.progress({ phase: "approval", holders: entitlements.entitled.length, batches: batches.length });
    await approvePayout(ctx, input, {
      recordHeight: record.height,
      payer: facts.payer,
      distributor: distributorAddress,
      snapshotHolders: holders.length,
      entitlements,
      batches: batches.length,
    });
    // Approved: from here a failure (gas, a short payer) belongs to the distribution, not the approval.
    ctx.progress({
      phase: "distribute",
      batch: 0,
      batches: batches.length,
      paid: 0,
      holders: entitlements.entitled.length,
      skipped: 0,
    });

    const fundingDeadline = new Date(
      (await ctx.now()).getTime() + toMilliseconds(input.fundingTimeout as Duration),
    );
    const distributor = await deployContract(ctx, "distributor", {
      chainId: input.chainId,
      signerId: input.payerSignerId,
      initCode: distributorInitCode(payer),
      salt: distributorSalt(ctx.orgId, payer),
      fundingDeadline: fundingDeadline.toISOString(),
    });
    const allowance = await ctx.step("allowance", () =>
      readAllowance(ctx, input.chainId, paymentToken, payer, distributor.address),
    );
    if (BigInt(allowance) < units(entitlements.total)) {
      await writeContract(ctx, "allowance.approve", {
        chainId: input.chainId,
        signerId: input.payerSignerId,
        to: paymentToken,
        data: approveCall(distributor.address),
        fundingDeadline: fundingDeadline.toISOString(),
      });
    }

    let paidHolders = 0;
    let skipped = 0;
    for (const [index, batch] of batches.entries()) {
      const id = batchId(ctx.orgId, input.actionId, index);
      // A fact before the write: a batch already paid (by an earlier execution of this action) is
      // skipped, since the contract would refuse it and the write would fail as reverted.
      const state = await ctx.step(`batch:${index}.state`, () =>
        readBatchState(ctx, input.chainId, distributor.address, paymentToken, payer, id),
      );
      const batchTotal = TokenAmount.sum(
        payment,
        batch.map((e) => e.amount),
      );
      if (state.paid) {
        skipped++;
      } else {
        if (BigInt(state.payerBalance) < units(batchTotal)) {
          throw new BusinessError(
            ERRORS.PAYER_SHORT,
            `payer ${facts.payer} holds ${state.payerBalance} base units of ${payment.symbol}, batch ${index} pays ${units(batchTotal)}`,
            {
              batch: index,
              payer: facts.payer,
              availableUnits: state.payerBalance,
              requiredUnits: units(batchTotal).toString(),
            },
          );
        }
        await writeContract(ctx, `batch:${index}`, {
          chainId: input.chainId,
          signerId: input.payerSignerId,
          to: distributor.address,
          data: distributeCall(
            id,
            paymentToken,
            batch.map((e) => chainAddress(e.holder, "holder")),
            batch.map((e) => units(e.amount)),
          ),
          fundingDeadline: fundingDeadline.toISOString(),
        });
      }
      paidHolders += batch.length;
      ctx.progress({
        phase: "distribute",
        batch: index + 1,
        batches: batches.length,
        paid: paidHolders,
        holders: entitlements.entitled.length,
        skipped,
      });
    }
    const api = tokenAmountApi(payment);
    ctx.progress({ phase: "done", batches: batches.length, paid: paidHolders, skipped });
    return {
      actionId: input.actionId,
      recordHeight: record.height,
      distributor: addressText(distributor.address),
      holders: entitlements.entitled.length,
      declared: z.encode(api, declared),
      distributed: z.encode(api, entitlements.total),
      residue: z.encode(api, entitlements.residue),
      entitlementsHash: entitlements.hash,
      batches: batches.length,
      batchesSkipped: skipped,
    };
  },
});

function tokenAsset(chainId: number, address: string, facts: { decimals: number; symbol: string }): Asset {
  return defineAsset({
    id: `eip155:${chainId}/erc20:${addressText(address)}`,
    decimals: facts.decimals,
    symbol: facts.symbol.trim() === "" ? "TOKEN" : facts.symbol,
  });
}

function parseDeclared(payment: Asset, amount: string): TokenAmount {
  try {
    return TokenAmount.parse(payment, amount);
  } catch (error) {
    if (!isValueError(error)) throw error;
    throw new BusinessError(ERRORS.INVALID, `amount ${amount}: ${error.message}`, {
      field: "amount",
      value: amount,
      rule: `at most ${payment.decimals} decimals of ${payment.symbol}`,
      cause: error.code,
    });
  }
}

/** Base units of an amount, for the chain encoder only. */
function units(amount: TokenAmount): bigint {
  return z.encode(tokenAmountUint256(amount.asset), amount);
}

/**
 * Waits (durably, polling) until a settled block is later than the record date, then journals the
 * record height. A record date in the future is first slept to, so the poll does not spin for days.
 */
async function resolveRecordHeight(ctx: WorkflowContext, chainId: number, recordDate: Date) {
  const now = await ctx.now();
  if (recordDate.getTime() > now.getTime()) await ctx.sleepUntil("record.date", recordDate);
  const settled = await ctx.waitFor("record.settled", {
    every: "1s",
    timeout: "1h",
    check: () => recordDateSettled(ctx, chainId, recordDate),
  });
  if (!("satisfied" in settled)) {
    throw new BusinessError(
      ERRORS.RECORD_DATE_UNSETTLED,
      `no settled block after ${recordDate.toISOString()} on chain ${chainId}`,
      { chainId, recordDate: recordDate.toISOString() },
    );
  }
  return ctx.step("record.height", () => findRecordHeight(ctx, chainId, recordDate));
}

/** The Distributor's CREATE2 address, known before it exists (to exclude it from the holders). */
function predictedDistributor(orgId: string, payer: ChainAddress): string {
  return addressText(
    deploymentAddress({
      initCode: distributorInitCode(payer),
      salt: distributorSalt(orgId, payer),
    }),
  );
}

/**
 * M-of-N approval of exactly what will be paid: the hash binds the holders and amounts, the rest
 * is what a person checks (totals, residue, rounding, tokens, record height, payer).
 */
async function approvePayout(
  ctx: WorkflowContext,
  input: CorporateActionInput,
  payout: {
    recordHeight: string;
    /** Lowercase address text, as the approval shows it. */
    payer: string;
    /** Lowercase address text, as the approval shows it. */
    distributor: string;
    snapshotHolders: number;
    entitlements: Entitlements<string>;
    batches: number;
  },
) {
  const api = tokenAmountApi(payout.entitlements.total.asset);
  const decision = await ctx.waitForApproval("payout", {
    params: {
      actionId: input.actionId,
      kind: input.kind,
      chainId: input.chainId,
      asset: addressText(input.asset),
      paymentToken: addressText(input.paymentToken),
      recordDate: input.recordDate,
      recordHeight: payout.recordHeight,
      declared: input.amount,
      entitled: z.encode(api, payout.entitlements.total),
      residue: z.encode(api, payout.entitlements.residue),
      rounding: input.rounding,
      holders: payout.entitlements.entitled.length,
      roundedToZero: payout.entitlements.roundedToZero,
      snapshotHolders: payout.snapshotHolders,
      entitlementsHash: payout.entitlements.hash,
      batches: payout.batches,
      batchSize: input.batchSize,
      payer: payout.payer,
      distributor: payout.distributor,
    },
    quorum: input.quorum,
    timeout: input.approvalTimeout as Duration,
  });
  if (decision.timedOut) {
    throw new BusinessError(
      ERRORS.APPROVAL_EXPIRED,
      `no payout approval for ${input.actionId} in ${input.approvalTimeout}`,
      {
        actionId: input.actionId,
      },
    );
  }
  if (!decision.approved) {
    throw new BusinessError(
      ERRORS.APPROVAL_REJECTED,
      `${decision.rejectedBy.name} rejected the payout of ${input.actionId}`,
      {
        actionId: input.actionId,
        reason: decision.reason,
      },
    );
  }
}
