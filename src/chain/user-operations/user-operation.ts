import {
  type Address,
  encodeFunctionData,
  getAddress,
  type Hex,
  keccak256,
  type Log,
  parseEventLogs,
  toHex,
} from "viem";
import { getUserOperationHash, toPackedUserOperation, type UserOperation } from "viem/account-abstraction";
import { withAttribution } from "../attribution.js";
import { EntryPointDeposits, SimpleAccount } from "../contracts/artifacts.js";
import { assertResolvedEntryPoint } from "../entry-point-resolver.js";

/**
 * ERC-4337 v0.7 UserOperations as the lifecycle builds them (docs/chains.md, "Account
 * abstraction"): pure functions, no node access. Every address that goes into a hash or a
 * submission is the resolved EntryPoint the execution recorded.
 */

/**
 * Gas limits Tenor sets itself (units of gas). The account's and the paymaster's validation are
 * bounded, known code (a signature check, a deposit read); `preVerificationGas` covers the
 * bundle's calldata and overhead; `bundleOverhead` is what the `handleOps` transaction needs on top
 * of the operation's own limits.
 */
export const USER_OPERATION_GAS = Object.freeze({
  verificationGasLimit: 150_000n,
  preVerificationGas: 50_000n,
  paymasterVerificationGasLimit: 100_000n,
  paymasterPostOpGasLimit: 0n,
  bundleOverhead: 100_000n,
});

/**
 * The 192-bit nonce key of an execution's UserOperation: one key per execution, so concurrent
 * writes from one account never race for a sequence number, and a replay reads the same key.
 */
export function userOperationNonceKey(executionId: string): bigint {
  return BigInt(keccak256(toHex(executionId))) >> 64n;
}

/** The account's `execute(to, value, data)` call with the ERC-8021 suffix appended once. */
export function accountCallData(call: { to: Address; value: bigint; data: Hex }, suffix: Hex): Hex {
  const execute = encodeFunctionData({
    abi: SimpleAccount.abi,
    functionName: "execute",
    args: [call.to, call.value, call.data],
  });
  return withAttribution(execute, suffix);
}

export interface UserOperationPlan {
  sender: Address;
  nonce: bigint;
  callData: Hex;
  callGasLimit: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  /** Gas paid from this paymaster's EntryPoint deposit; without one, from the account's. */
  paymaster?: Address;
}

/** The unsigned operation (signature `0x`). */
export function buildUserOperation(plan: UserOperationPlan): UserOperation<"0.7"> {
  return {
    sender: plan.sender,
    nonce: plan.nonce,
    callData: plan.callData,
    callGasLimit: plan.callGasLimit,
    verificationGasLimit: USER_OPERATION_GAS.verificationGasLimit,
    preVerificationGas: USER_OPERATION_GAS.preVerificationGas,
    maxFeePerGas: plan.maxFeePerGas,
    maxPriorityFeePerGas: plan.maxPriorityFeePerGas,
    signature: "0x",
    ...(plan.paymaster
      ? {
          paymaster: plan.paymaster,
          paymasterVerificationGasLimit: USER_OPERATION_GAS.paymasterVerificationGasLimit,
          paymasterPostOpGasLimit: USER_OPERATION_GAS.paymasterPostOpGasLimit,
          paymasterData: "0x" as Hex,
        }
      : {}),
  };
}

/** Every gas unit the operation may be charged for: the prefund is this × maxFeePerGas. */
export function userOperationGas(plan: Pick<UserOperationPlan, "callGasLimit" | "paymaster">): bigint {
  const paymasterGas = plan.paymaster
    ? USER_OPERATION_GAS.paymasterVerificationGasLimit + USER_OPERATION_GAS.paymasterPostOpGasLimit
    : 0n;
  return (
    plan.callGasLimit +
    USER_OPERATION_GAS.verificationGasLimit +
    USER_OPERATION_GAS.preVerificationGas +
    paymasterGas
  );
}

/** The v0.7 UserOperation hash: bound to the EntryPoint address and the chain. */
export function hashUserOperation(op: UserOperation<"0.7">, entryPoint: Address, chainId: number): Hex {
  return getUserOperationHash({
    userOperation: op,
    entryPointAddress: entryPoint,
    entryPointVersion: "0.7",
    chainId,
  });
}

/**
 * The `handleOps([op], beneficiary)` transaction. Refuses (ENTRYPOINT_NOT_RESOLVED_ADDRESS) an
 * EntryPoint named by its configured reference instead of the resolved contract: the operation's
 * hash and signature bind the EntryPoint, so it must be rebuilt and re-signed, never redirected.
 */
export function handleOpsCall(
  signed: UserOperation<"0.7">,
  beneficiary: Address,
  entryPoint: { named: Address; resolved: Address; configured: Address },
): { to: Address; data: Hex; gasLimit: bigint } {
  assertResolvedEntryPoint(entryPoint.named, entryPoint.resolved, entryPoint.configured);
  const data = encodeFunctionData({
    abi: EntryPointDeposits.abi,
    functionName: "handleOps",
    args: [[toPackedUserOperation(signed)], beneficiary],
  });
  return {
    to: getAddress(entryPoint.named),
    data,
    gasLimit: userOperationGas(signed) + USER_OPERATION_GAS.bundleOverhead,
  };
}

/** What the EntryPoint reported for one operation in a mined bundle. */
export interface UserOperationOutcome {
  success: boolean;
  sender: Address;
  paymaster: Address;
  /** Wei charged to the payer's deposit and paid to the bundler's beneficiary. */
  actualGasCost: bigint;
  actualGasUsed: bigint;
  /** The call's revert data when it failed. */
  revertReason?: Hex;
}

/** Finds `UserOperationEvent` (and any `UserOperationRevertReason`) of `userOpHash` in a receipt's logs. */
export function findUserOperationOutcome(
  logs: readonly Log[],
  entryPoint: Address,
  userOpHash: Hex,
): UserOperationOutcome | undefined {
  const own = logs.filter((log) => getAddress(log.address) === getAddress(entryPoint));
  const events = parseEventLogs({ abi: EntryPointDeposits.abi, logs: own });
  const reverted = events.find(
    (e) => e.eventName === "UserOperationRevertReason" && e.args.userOpHash === userOpHash,
  );
  for (const event of events) {
    if (event.eventName !== "UserOperationEvent" || event.args.userOpHash !== userOpHash) continue;
    return {
      success: event.args.success,
      sender: event.args.sender,
      paymaster: event.args.paymaster,
      actualGasCost: event.args.actualGasCost,
      actualGasUsed: event.args.actualGasUsed,
      ...(reverted?.eventName === "UserOperationRevertReason"
        ? { revertReason: reverted.args.revertReason }
        : {}),
    };
  }
  return undefined;
}
