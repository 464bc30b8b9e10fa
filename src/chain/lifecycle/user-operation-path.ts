import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  decodeFunctionData,
  ExecutionRevertedError,
  type Hex,
} from "viem";
import { z } from "zod";
import type { WorkflowContext } from "../../engine/context.js";
import { BusinessError } from "../../engine/errors.js";
import type { ServiceLookup } from "../../engine/services.js";
import { TenorError } from "../../errors/tenor-error.js";
import {
  type ChainAddress,
  type ChainRef,
  chainAddress,
  chainAddressSchema,
  fromChecksummed,
} from "../../values/index.js";
import { CHAIN_ERRORS } from "../chain-error-codes.js";
import { EntryPointDeposits } from "../contracts/artifacts.js";
import { resolveEntryPoint } from "../entry-point-resolver.js";
import type { LocalKeySigner } from "../signers/signer.js";
import {
  accountCallData,
  buildUserOperation,
  findUserOperationOutcome,
  handleOpsCall,
  hashUserOperation,
  userOperationGas,
  userOperationNonceKey,
} from "../user-operations/user-operation.js";
import { chainAccessService } from "./chain-access.js";
import { type Estimate, estimate, estimateSchema, parseValue, toWei, valueWei } from "./node-steps.js";
import type { TransactionRequest, TransactionResult } from "./transaction-schemas.js";
import { txHash } from "./transaction-schemas.js";

/**
 * The UserOperation path of the lifecycle (docs/chains.md, "Account abstraction"): the account's
 * owner signs an ERC-4337 v0.7 operation for the resolved EntryPoint the execution recorded, the
 * EntryPoint's validation is simulated, and the `handleOps` bundle then goes through the ordinary
 * local-key transaction (nonce, journaled bytes, confirmation). Gas comes from the paymaster's
 * EntryPoint deposit when one is named, else from the account.
 */

/** What the preparation journals: enough to submit and to read the outcome on any replay. */
const PreparedSchema = z.object({
  entryPoint: chainAddressSchema(),
  userOpHash: txHash,
  handleOps: z.string() as z.ZodType<Hex>,
  gasLimit: z.string(),
});
export type PreparedUserOperation = z.infer<typeof PreparedSchema>;

const EntryPointSchema = z.object({ configured: chainAddressSchema(), resolved: chainAddressSchema() });

/** Checks a funding destination like the plain path, under its own step and signal names. */
export type FundingCheck = (payer: Address, est: Estimate) => Promise<void>;

type Chain = ChainRef<number>;

export async function prepareUserOperation(
  ctx: WorkflowContext,
  input: TransactionRequest,
  chain: Chain,
  owner: Address,
  suffix: Hex,
  ensureFunded: FundingCheck,
): Promise<PreparedUserOperation> {
  const node = () => ctx.service(chainAccessService).chains.get(input.chainId);
  const account = chainAddress(input.account, "account");
  const paymaster = input.paymaster ? chainAddress(input.paymaster, "paymaster") : undefined;
  // Resolved once and recorded: a replay (or a reference re-pointed later) keeps this address.
  const entryPoint = await ctx.step("userop.entryPoint", () => resolveConfigured(ctx, input.chainId), {
    schema: EntryPointSchema,
  });
  const callData = accountCallData(
    {
      to: chainAddress(input.to, "to"),
      value: valueWei(chain, parseValue(chain, input.valueWei)),
      data: input.data as Hex,
    },
    suffix,
  );
  const est = (await ctx.step(
    "userop.estimate",
    () =>
      estimate(node().public, chain, {
        from: entryPoint.resolved,
        to: account,
        data: callData,
        value: 0n,
        ...(input.gasLimit ? { gasLimit: input.gasLimit } : {}),
      }).catch((error: unknown) => {
        // The account's call reverts now: no retry changes that (a given gasLimit skips this check).
        const reverted = error instanceof BaseError && error.walk((e) => e instanceof ExecutionRevertedError);
        if (!reverted) throw error;
        throw new TenorError(
          CHAIN_ERRORS.USER_OPERATION_REFUSED,
          `the account's call reverts (${(reverted as BaseError).shortMessage}); give gasLimit to send it anyway`,
          { details: { account, verdict: "rejected" } },
        );
      }),
    { schema: estimateSchema(chain) },
  )) as Estimate;
  const plan = {
    sender: account,
    callData,
    callGasLimit: BigInt(est.gas),
    maxFeePerGas: toWei(chain, est.maxFeePerGas),
    maxPriorityFeePerGas: toWei(chain, est.maxPriorityFeePerGas),
    ...(paymaster ? { paymaster } : {}),
  };
  // The payer is the paymaster's deposit when named (the account's ether does not count), else the account.
  await ensureFunded(account, { ...est, gas: userOperationGas(plan).toString() });
  const nonce = await ctx.step("userop.nonce", async () =>
    (
      await node().public.readContract({
        address: entryPoint.resolved,
        abi: EntryPointDeposits.abi,
        functionName: "getNonce",
        args: [account, userOperationNonceKey(ctx.executionId)],
      })
    ).toString(),
  );
  const prepared = await ctx.step(
    "userop.sign",
    async () => {
      const op = buildUserOperation({ ...plan, nonce: BigInt(nonce) });
      const userOpHash = hashUserOperation(op, entryPoint.resolved, input.chainId);
      const signer = ctx
        .service(chainAccessService)
        .signers.forOrg(ctx.orgId, input.signerId) as LocalKeySigner;
      const signature = await signer.signUserOperationHash(userOpHash);
      const call = handleOpsCall({ ...op, signature }, owner, {
        named: entryPoint.resolved,
        resolved: entryPoint.resolved,
        configured: entryPoint.configured,
      });
      return {
        entryPoint: fromChecksummed(call.to),
        userOpHash,
        handleOps: call.data,
        gasLimit: call.gasLimit.toString(),
      };
    },
    { schema: PreparedSchema },
  );
  ctx.progress({ milestone: 1, stage: "user operation signed", userOpHash: prepared.userOpHash });
  const simulation = await ctx.step("userop.simulate", () =>
    simulateHandleOps(ctx, input.chainId, owner, prepared),
  );
  if (!simulation.ok) {
    throw new BusinessError(
      CHAIN_ERRORS.USER_OPERATION_REFUSED,
      `the EntryPoint refused the user operation: ${simulation.reason}`,
      { reason: simulation.reason, userOpHash: prepared.userOpHash, verdict: "rejected" },
    );
  }
  return prepared;
}

/**
 * Runs the bundle against the node's current state (`eth_call` of `handleOps` from the bundler):
 * the EntryPoint's refusal (FailedOp with its AAnn reason) or any revert is an answer; a transport
 * failure is thrown (the step retries).
 */
async function simulateHandleOps(
  services: ServiceLookup,
  chainId: number,
  bundler: Address,
  prepared: PreparedUserOperation,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const { args } = decodeFunctionData({ abi: EntryPointDeposits.abi, data: prepared.handleOps });
  try {
    await services
      .service(chainAccessService)
      .chains.get(chainId)
      .public.simulateContract({
        account: bundler,
        address: prepared.entryPoint,
        abi: EntryPointDeposits.abi,
        functionName: "handleOps",
        args: args as never,
        gas: BigInt(prepared.gasLimit),
      });
    return { ok: true };
  } catch (error) {
    const reverted =
      error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : null;
    if (!(reverted instanceof ContractFunctionRevertedError)) throw error;
    if (reverted.data?.errorName === "FailedOp")
      return { ok: false, reason: String(reverted.data.args?.[1]) };
    return { ok: false, reason: reverted.shortMessage };
  }
}

/**
 * After the bundle's transaction is final: the operation's own outcome from `UserOperationEvent`.
 * A reverted bundle ran nothing (refused); `success = false` is the operation's terminal failure,
 * never a reason to send it again.
 */
export async function settleUserOperation(
  ctx: WorkflowContext,
  input: TransactionRequest,
  prepared: PreparedUserOperation,
  bundle: TransactionResult,
): Promise<TransactionResult> {
  if (bundle.verdict === "reverted") {
    throw new BusinessError(
      CHAIN_ERRORS.USER_OPERATION_REFUSED,
      `the bundle ${bundle.hash} reverted: the user operation did not run`,
      { userOpHash: prepared.userOpHash, hash: bundle.hash, verdict: "rejected" },
    );
  }
  const outcome = await ctx.step("userop.receipt", async () => {
    const receipt = await ctx
      .service(chainAccessService)
      .chains.get(input.chainId)
      .public.getTransactionReceipt({ hash: bundle.hash });
    const found = findUserOperationOutcome(receipt.logs, prepared.entryPoint, prepared.userOpHash);
    if (!found) {
      throw new TenorError(
        CHAIN_ERRORS.USER_OPERATION_REFUSED,
        `bundle ${bundle.hash} has no UserOperationEvent for ${prepared.userOpHash}`,
        { details: { hash: bundle.hash, userOpHash: prepared.userOpHash } },
      );
    }
    return {
      success: found.success,
      sender: found.sender,
      paymaster: found.paymaster,
      actualGasCostWei: found.actualGasCost.toString(),
      actualGasUsed: found.actualGasUsed.toString(),
      ...(found.revertReason ? { revertReason: found.revertReason } : {}),
    };
  });
  const { success, revertReason, ...charged } = outcome;
  if (!success) {
    throw new BusinessError(
      CHAIN_ERRORS.USER_OPERATION_REVERTED,
      `the user operation ${prepared.userOpHash} ran and its call reverted`,
      {
        userOpHash: prepared.userOpHash,
        hash: bundle.hash,
        ...charged,
        ...(revertReason ? { revertReason } : {}),
        verdict: "reverted",
      },
    );
  }
  return { ...bundle, userOperation: { hash: prepared.userOpHash, ...charged } };
}

async function resolveConfigured(
  services: ServiceLookup,
  chainId: number,
): Promise<{ configured: ChainAddress; resolved: ChainAddress }> {
  const node = services.service(chainAccessService).chains.get(chainId);
  const configured = node.config.entryPoint;
  if (!configured) {
    throw new TenorError(
      CHAIN_ERRORS.ENTRYPOINT_UNRESOLVED,
      `chain ${chainId} has no EntryPoint configured (chains[].entryPoint)`,
      { details: { chainId } },
    );
  }
  return { configured, resolved: await resolveEntryPoint(node.public, configured) };
}
