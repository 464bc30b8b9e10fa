import type { Address, Hex } from "viem";
import { z } from "zod";
import type { WorkflowContext } from "../../engine/context.js";
import { BusinessError } from "../../engine/errors.js";
import type { ServiceLookup } from "../../engine/services.js";
import { defineWorkflow } from "../../engine/workflow.js";
import { TenorError } from "../../errors/tenor-error.js";
import {
  addressText,
  type ChainAddress,
  type ChainRef,
  chainAddress,
  defineChain,
} from "../../values/index.js";
import { attributionSuffix, withAttribution } from "../attribution.js";
import { CHAIN_ERRORS } from "../chain-error-codes.js";
import { resolveEntryPoint } from "../entry-point-resolver.js";
import type { LocalKeySigner } from "../signers/signer.js";
import { bumpStep } from "./bump-step.js";
import { chainAccessService } from "./chain-access.js";
import { waitForFinality, waitForInclusion } from "./confirmation.js";
import { runCustodyIntent } from "./custody-path.js";
import type { Fees } from "./fee-bump.js";
import { BROADCAST_RETRY, broadcastFunded } from "./funded-broadcast.js";
import { awaitGasFunding } from "./funding-wait.js";
import {
  broadcast,
  type Estimate,
  estimate,
  estimateSchema,
  nativeFromWei,
  parseValue,
  payerBalance,
  signAttempt,
  toWei,
  valueWei,
} from "./node-steps.js";
import { releaseNonceWindow, reserveNonceParked, reserveNonceWithinWindow } from "./nonce-reservation.js";
import {
  deploymentIssue,
  TransactionRequest,
  TransactionRequestV1,
  TransactionResult,
  txHash,
} from "./transaction-schemas.js";
import { prepareUserOperation, settleUserOperation } from "./user-operation-path.js";
import { indexedHeightsService, reportIndexed } from "./wait-for-indexed.js";

/** The chain (nodes, signers, nonces) and, for read-after-write, the index's heights. */
const LIFECYCLE_SERVICES = [chainAccessService, indexedHeightsService];

/**
 * The one workflow every on-chain write goes through (docs/chains.md). Milestones on the
 * execution's progress: 1 accepted → 2 signed and submitted → 3 receipt / finality met. Nonces come
 * from the keyed nonce entity; the signed bytes and their hash are journaled before broadcast, so a
 * crash anywhere re-broadcasts the same bytes (or finds them on the node) and never signs a second
 * payload with another nonce for one intent. The signer is one of the execution's organisation
 * (`ctx.orgId`, from the caller's key); the input names no organisation.
 */
export const chainTransaction = transactionVersion(6, {
  fundRefusedBroadcasts: true,
  explainBumps: true,
  nonceWindow: true,
  parkNonce: true,
});

/**
 * Version 5, registered until no execution of it is unfinished: its `nonce.reserve:<attempt>`
 * step awaits the nonce entity's reply inside the turn (version 6 parks the run until the grant).
 */
export const chainTransactionV5 = transactionVersion(5, {
  fundRefusedBroadcasts: true,
  explainBumps: true,
  nonceWindow: true,
  parkNonce: false,
});

/**
 * Version 4, registered until no execution of it is unfinished: it reserves its nonce with no
 * bound on the sender's unmined transactions (version 5 reserves within `maxPendingPerSender`).
 */
export const chainTransactionV4 = transactionVersion(4, {
  fundRefusedBroadcasts: true,
  explainBumps: true,
  nonceWindow: false,
  parkNonce: false,
});

/**
 * Version 3, registered until no execution of it is unfinished: its `bump:<round>` steps journal
 * the decision alone (version 4 adds why: the rule that fired, the old and suggested fees).
 */
export const chainTransactionV3 = transactionVersion(3, {
  fundRefusedBroadcasts: true,
  explainBumps: false,
  nonceWindow: false,
  parkNonce: false,
});

/**
 * Version 2, registered until no execution of it is unfinished: a broadcast the node refused for
 * insufficient funds was retried, then suspended the execution (version 3 waits for funding and
 * journals the refusal; a version-2 journal never holds one).
 */
export const chainTransactionV2 = transactionVersion(2, {
  fundRefusedBroadcasts: false,
  explainBumps: false,
  nonceWindow: false,
  parkNonce: false,
});

/**
 * Version 1, registered until no execution of it is unfinished (docs/engine.md, "Versions"). Its
 * input carried `orgId`, which its plan step refuses unless it is the execution's own; past that
 * check it runs the same steps as version 2.
 */
export const chainTransactionV1 = defineWorkflow({
  name: "chain.transaction",
  version: 1,
  input: TransactionRequestV1,
  output: TransactionResult,
  services: LIFECYCLE_SERVICES,
  run: (ctx, input) =>
    runTransaction(
      ctx,
      input,
      { fundRefusedBroadcasts: false, explainBumps: false, nonceWindow: false, parkNonce: false },
      async () => {
        const orgId = await ctx.service(chainAccessService).executionOrg(ctx.executionId);
        if (orgId !== input.orgId) {
          throw new TenorError(
            CHAIN_ERRORS.SIGNER_UNKNOWN,
            `the request names organisation ${input.orgId}, not this execution's`,
            { details: { signer: input.signerId } },
          );
        }
      },
    ),
});

/** Every registered version of the lifecycle, oldest first: a runner registers all of them. */
export const chainTransactionVersions = [
  chainTransactionV1,
  chainTransactionV2,
  chainTransactionV3,
  chainTransactionV4,
  chainTransactionV5,
  chainTransaction,
] as const;

/** What differs between versions past their input. */
interface LifecycleRules {
  /** Version 3: a broadcast refused for insufficient funds waits for funding (funded-broadcast.ts). */
  fundRefusedBroadcasts: boolean;
  /** Version 4: each `bump:<round>` step also journals why it fired and which rule set each fee (bump-step.ts). */
  explainBumps: boolean;
  /**
   * Version 5: the nonce is reserved within the sender's window (`maxPendingPerSender`), and a
   * mined transaction wakes the sender's next waiting run (nonce-reservation.ts).
   */
  nonceWindow: boolean;
  /**
   * Version 6 (with `nonceWindow`): the run parks while its reservation queues instead of awaiting
   * the entity's reply inside its turn, so a queued reservation holds no turn slot.
   */
  parkNonce: boolean;
}

/**
 * A version of `chain.transaction` on today's request: the one lifecycle, with the rules that
 * version journals by (what a version's journal holds must stay what its rules wrote).
 */
function transactionVersion(version: number, rules: LifecycleRules) {
  return defineWorkflow({
    name: "chain.transaction",
    version,
    input: TransactionRequest,
    output: TransactionResult,
    services: LIFECYCLE_SERVICES,
    run: (ctx, input) => runTransaction(ctx, input, rules),
  });
}

/**
 * The lifecycle's body, shared by every version. `checkPlan` runs in the plan step before the
 * signer lookup (a version's own refusal, journaled with the plan).
 */
async function runTransaction(
  ctx: WorkflowContext,
  input: TransactionRequest,
  rules: LifecycleRules,
  checkPlan?: () => Promise<void>,
): Promise<TransactionResult> {
  const chain = defineChain({ id: input.chainId, nativeCurrency: { symbol: "ETH", decimals: 18 } });
  ctx.progress({ milestone: 1, stage: "accepted" });
  if (input.paymaster && !input.account) {
    // A paymaster's deposit pays only for a UserOperation; a plain transaction's sender always pays.
    throw new BusinessError(
      CHAIN_ERRORS.USER_OPERATION_REFUSED,
      "a paymaster pays gas only for a UserOperation: name the smart account in `account`",
      { field: "paymaster", verdict: "rejected" },
    );
  }
  const plan = await ctx.step("plan", async () => {
    ctx.service(chainAccessService).chains.get(input.chainId);
    await checkPlan?.();
    // Signer access follows the execution's organisation, which only the platform sets.
    const signer = ctx.service(chainAccessService).signers.forOrg(ctx.orgId, input.signerId);
    return { kind: signer.kind, from: signer.address };
  });
  // Computed once here, at construction; every attempt carries exactly these bytes.
  const suffix = attributionSuffix(input.attribution);
  refuseUnsendableDeployment(input, plan.kind, suffix);
  if (input.account) return runUserOperation(ctx, input, chain, plan, suffix, rules);
  const data = withAttribution(input.data as Hex, suffix);
  const from = chainAddress(plan.from, "plan.from");
  if (plan.kind === "custody") return runCustodyIntent(ctx, input, chain, from, data);
  return runLocalTransaction(ctx, input, chain, from, data, rules);
}

type Chain = ChainRef<number>;

/**
 * A deployment (no `to`) the API would have refused, reaching the lifecycle another way (a child
 * execution), or one for a custody signer, whose intents always name a callee: refused before
 * anything is signed (docs/chains.md, "Deploying a contract").
 */
function refuseUnsendableDeployment(input: TransactionRequest, signerKind: string, suffix: Hex): void {
  if (input.to !== undefined) return;
  const issue =
    deploymentIssue(input, (suffix.length - 2) / 2) ??
    (signerKind === "custody"
      ? {
          field: "signerId",
          message: `signer ${input.signerId} is a custody signer; a deployment needs a local key`,
        }
      : undefined);
  if (!issue) return;
  throw new BusinessError(
    CHAIN_ERRORS.DEPLOYMENT_REFUSED,
    `deployment refused: ${issue.field} ${issue.message}`,
    {
      field: issue.field,
      rule: issue.message,
      verdict: "rejected",
    },
  );
}

/**
 * An ERC-4337 write (docs/chains.md, "Account abstraction"): the owner signs the operation, then
 * the `handleOps` bundle is an ordinary local-key transaction to the recorded EntryPoint (the
 * owner's signer submits it and is the beneficiary the EntryPoint reimburses).
 */
async function runUserOperation(
  ctx: WorkflowContext,
  input: TransactionRequest,
  chain: Chain,
  plan: { kind: string; from: string },
  suffix: Hex,
  rules: LifecycleRules,
): Promise<TransactionResult> {
  if (plan.kind !== "local") {
    throw new BusinessError(
      CHAIN_ERRORS.USER_OPERATION_REFUSED,
      `signer ${input.signerId} is a custody signer; a UserOperation needs a local-key owner`,
      { signer: input.signerId, verdict: "rejected" },
    );
  }
  const owner = chainAddress(plan.from, "plan.from");
  const prepared = await prepareUserOperation(ctx, input, chain, owner, suffix, (payer, est) =>
    ensureFunded(ctx, input, chain, payer, est, USER_OPERATION_FUNDING),
  );
  const { account: _account, paymaster: _paymaster, fundingDeadline: _deadline, ...rest } = input;
  const bundle = await runLocalTransaction(
    ctx,
    { ...rest, to: prepared.entryPoint, valueWei: "0", gasLimit: prepared.gasLimit },
    chain,
    owner,
    prepared.handleOps,
    rules,
  );
  return settleUserOperation(ctx, input, prepared, bundle);
}

/** Step and signal names of the funding check of a UserOperation's payer (the bundle has its own). */
const USER_OPERATION_FUNDING = { step: "userop.funding.check", signal: "userop.funding" };

async function runLocalTransaction(
  ctx: WorkflowContext,
  input: TransactionRequest,
  chain: Chain,
  from: ChainAddress,
  data: Hex,
  rules: LifecycleRules,
): Promise<TransactionResult> {
  const node = () => ctx.service(chainAccessService).chains.get(input.chainId);
  // No callee: a contract creation, whose address the receipt names once it confirms.
  const to = input.to === undefined ? undefined : chainAddress(input.to, "to");
  const value = parseValue(chain, input.valueWei);
  const est = (await ctx.step(
    "estimate",
    () =>
      estimate(node().public, chain, {
        from,
        to,
        data,
        value: valueWei(chain, value),
        ...(input.gasLimit ? { gasLimit: input.gasLimit } : {}),
      }),
    { schema: estimateSchema(chain) },
  )) as Estimate;
  await ensureFunded(ctx, input, chain, from, est);
  const nonce = rules.parkNonce
    ? await reserveNonceParked(ctx, input.chainId, from)
    : rules.nonceWindow
      ? await reserveNonceWithinWindow(ctx, input.chainId, from)
      : await reserveUnbounded(ctx, input.chainId, from);
  const signer = () =>
    ctx.service(chainAccessService).signers.forOrg(ctx.orgId, input.signerId) as LocalKeySigner;
  const signed = SignedSchema;
  const send = async (step: string, s: { raw: Hex; hash: Hex }, fees: Fees, milestone: 1 | 2) => {
    if (!rules.fundRefusedBroadcasts) {
      await ctx.step(step, () => broadcast(node().public, s), { retry: BROADCAST_RETRY });
      return;
    }
    const requiredWei = toWei(chain, fees.maxFeePerGas) * BigInt(est.gas) + valueWei(chain, value);
    await broadcastFunded(ctx, {
      chainId: input.chainId,
      step,
      signed: s,
      payer: from,
      requiredWei,
      fundingDeadline: input.fundingDeadline,
      milestone,
    });
  };
  const attempts: { hash: Hex; raw: Hex; fees: Fees }[] = [];
  const sign = async (fees: Fees) => {
    const i = attempts.length;
    const s = await ctx.step(
      `sign:${i}`,
      () =>
        signAttempt(signer(), chain, {
          nonce,
          to,
          data,
          value: valueWei(chain, value),
          gas: est.gas,
          fees,
        }),
      { schema: signed },
    );
    attempts.push({ ...s, fees });
    await send(`broadcast:${i}`, s, fees, i === 0 ? 1 : 2);
    ctx.progress({ milestone: 2, stage: "submitted", nonce, hash: s.hash, attempts: attempts.length });
  };
  await sign({ maxFeePerGas: est.maxFeePerGas, maxPriorityFeePerGas: est.maxPriorityFeePerGas });
  const feeRules = await ctx.step("fee.rules", () => ({ ...node().config.fees }));
  let attention: { code: string; reason: string } | undefined;
  let windowReleased = !rules.nonceWindow;
  for (let round = 0; ; round++) {
    const canBump = attention === undefined;
    const included = await waitForInclusion(
      ctx,
      round,
      {
        chainId: input.chainId,
        hashes: attempts.map((a) => a.hash),
        ...(attention ? { operatorAttention: attention } : {}),
      },
      canBump ? feeRules.stuckAfterMs : undefined,
    );
    if (included.timedOut) {
      const last = attempts.at(-1) as (typeof attempts)[number];
      const decision = await bumpStep(ctx, round, {
        chainId: input.chainId,
        chain,
        stuck: { attempt: attempts.length - 1, hash: last.hash, fees: last.fees },
        rules: feeRules,
        explain: rules.explainBumps,
      });
      if (decision.replace)
        await sign({
          maxFeePerGas: decision.maxFeePerGas,
          maxPriorityFeePerGas: decision.maxPriorityFeePerGas,
        });
      else attention = { code: CHAIN_ERRORS.TX_STUCK, reason: decision.reason };
      // Out of replacements: keep watching every hash, and show the operator why it is stuck.
      if (!attention && attempts.length > feeRules.maxBumps)
        attention = {
          code: CHAIN_ERRORS.TX_STUCK,
          reason: `replaced ${feeRules.maxBumps} times without inclusion`,
        };
      continue;
    }
    if (!windowReleased) {
      windowReleased = true;
      await releaseNonceWindow(ctx, input.chainId, from);
    }
    const final = await settle(ctx, input, round, included);
    if (final === "reorged") {
      const again = attempts.find((a) => a.hash === included.hash);
      if (again) await send(`rebroadcast:${round}`, again, again.fees, 2);
      continue;
    }
    const contractAddress =
      to === undefined && final === "confirmed"
        ? await createdContract(ctx, input.chainId, included.hash)
        : undefined;
    return {
      verdict: final,
      hash: included.hash,
      from,
      nonce,
      blockNumber: included.blockNumber,
      blockHash: included.blockHash,
      attempts: attempts.length,
      ...(contractAddress ? { contractAddress } : {}),
    };
  }
}

/**
 * The address a confirmed creation made, as its receipt names it (journaled: a replay reports the
 * same address without asking the node again).
 */
async function createdContract(
  ctx: WorkflowContext,
  chainId: number,
  hash: Hex,
): Promise<string | undefined> {
  const created = await ctx.step("deploy.address", async () => {
    const receipt = await ctx
      .service(chainAccessService)
      .chains.get(chainId)
      .public.getTransactionReceipt({ hash });
    return receipt.contractAddress ? addressText(receipt.contractAddress) : null;
  });
  if (created === null) return undefined;
  ctx.progress({ milestone: 3, stage: "final", hash, verdict: "confirmed", contractAddress: created });
  return created;
}

/** The nonce of versions 1–4: no bound on the sender's unmined transactions. */
async function reserveUnbounded(ctx: WorkflowContext, chainId: number, from: ChainAddress): Promise<number> {
  const floor = await ctx.step("nonce.floor", () =>
    ctx
      .service(chainAccessService)
      .chains.get(chainId)
      .public.getTransactionCount({ address: from, blockTag: "pending" }),
  );
  return ctx.step("nonce.reserve", () =>
    ctx
      .service(chainAccessService)
      .reserveNonce({ chainId, sender: from, floor, commandId: ctx.executionId }),
  );
}

/** Milestone 3 once included; back to waiting for inclusion when a reorg drops the receipt. */
async function settle(
  ctx: WorkflowContext,
  input: TransactionRequest,
  round: number,
  included: { hash: Hex; blockNumber: string; blockHash: Hex },
): Promise<"confirmed" | "reverted" | "reorged"> {
  ctx.progress({ milestone: 3, stage: "included", hash: included.hash, blockNumber: included.blockNumber });
  const finality = await waitForFinality(ctx, round, { chainId: input.chainId, ...included });
  if (finality.outcome === "reorged") {
    ctx.progress({ milestone: 2, stage: "reorged: waiting for inclusion again", hash: included.hash });
    return "reorged";
  }
  const verdict = finality.status === "success" ? "confirmed" : "reverted";
  ctx.progress({ milestone: 3, stage: "final", hash: included.hash, verdict });
  if (input.readAfterWrite)
    await reportIndexed(ctx, {
      chainId: input.chainId,
      blockNumber: included.blockNumber,
      hash: included.hash,
      verdict,
    });
  return verdict;
}

/**
 * The gas-funding pause: when the payer (the sender's balance, or a paymaster's deposit in the
 * resolved EntryPoint) cannot cover gas × maxFeePerGas + value, wait for funding until the
 * request's deadline (status waiting, kind `funding`), else GAS_REQUIRED naming the shortfall.
 */
async function ensureFunded(
  ctx: WorkflowContext,
  input: TransactionRequest,
  chain: Chain,
  from: Address,
  est: Estimate,
  names: { step: string; signal: string } = { step: "funding.check", signal: "funding" },
) {
  const required = est.maxFeePerGas
    .costFor(BigInt(est.gas))
    .plus(input.paymaster ? nativeFromWei(chain, 0n) : parseValue(chain, input.valueWei));
  const requiredWei = valueWei(chain, required).toString();
  const check = await ctx.step(names.step, async () => {
    const node = ctx.service(chainAccessService).chains.get(input.chainId);
    const payer = input.paymaster
      ? {
          kind: "entryPointDeposit" as const,
          entryPoint: await resolvedEntryPoint(ctx, input.chainId),
          account: chainAddress(input.paymaster, "paymaster"),
        }
      : { kind: "balance" as const, address: from };
    const balance = await payerBalance(node.public, payer);
    return { payer, balanceWei: balance.toString() };
  });
  if (BigInt(check.balanceWei) >= BigInt(requiredWei)) return;
  await awaitGasFunding(ctx, {
    chainId: input.chainId,
    signal: names.signal,
    deadline: input.fundingDeadline,
    milestone: 1,
    facts: {
      destination: check.payer,
      requiredWei,
      availableWei: check.balanceWei,
      shortfallWei: (BigInt(requiredWei) - BigInt(check.balanceWei)).toString(),
    },
  });
}

async function resolvedEntryPoint(services: ServiceLookup, chainId: number): Promise<ChainAddress> {
  const node = services.service(chainAccessService).chains.get(chainId);
  if (!node.config.entryPoint)
    throw new TenorError(CHAIN_ERRORS.ENTRYPOINT_UNRESOLVED, `chain ${chainId} has no EntryPoint configured`);
  return resolveEntryPoint(node.public, node.config.entryPoint);
}

const SignedSchema = z.object({ raw: z.string() as z.ZodType<Hex>, hash: txHash });
