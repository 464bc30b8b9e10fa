import { type Address, concatHex, getContractAddress, type Hex, keccak256, toHex } from "viem";
import { attributionSuffix } from "../../src/chain/attribution.js";
import { chainAccessService } from "../../src/chain/lifecycle/chain-access.js";
import type { TransactionResult } from "../../src/chain/lifecycle/transaction-schemas.js";
import { chainTransaction } from "../../src/chain/lifecycle/transaction-workflow.js";
import type { WorkflowContext } from "../../src/engine/context.js";
import { BusinessError, ChildWorkflowError } from "../../src/engine/errors.js";
import type { ServiceLookup } from "../../src/engine/services.js";
import { type ChainAddress, fromChecksummed } from "../../src/values/index.js";
import { FLOW_SUPPORT_ERRORS } from "./errors.js";

/**
 * How a domain workflow writes to a chain: every write is one child execution of the transaction
 * lifecycle (`chain.transaction`, docs/chains.md), so it has its own milestones, nonce, journaled
 * signed bytes and in-doubt handling, and a replay of the parent returns the child's recorded
 * result instead of writing again. The organisation is the parent's (from its API key).
 */

/** The deterministic CREATE2 deployer (Arachnid's), present on anvil and on most public chains. */
export const CREATE2_DEPLOYER: Address = "0x4e59b44847b379578588920cA78FbF26c0B4956C";

export interface ContractWrite {
  chainId: number;
  /** A configured signer of the execution's organisation. */
  signerId: string;
  to: Address;
  data: Hex;
  valueWei?: string;
  /** Wait for gas funding until this instant instead of failing with GAS_REQUIRED. */
  fundingDeadline?: string;
  /** After finality, wait until the Ledger Index has the block (milestone 4). */
  readAfterWrite?: boolean;
}

/** The ERC-8021 attribution codes of every domain write. */
const ATTRIBUTION = ["tenor"];

/** Thrown (as a business failure) when a write was mined but reverted. */
export const WRITE_REVERTED = FLOW_SUPPORT_ERRORS.WRITE_REVERTED;

/**
 * One on-chain write as a child lifecycle execution; a reverted write is a business failure
 * naming `label`, since a domain step that did not take effect must not be reported as done. A
 * write that fails (GAS_REQUIRED, SIGNER_UNKNOWN, CUSTODY_REJECTED, ...) fails the caller with the
 * write's own code, not CHILD_FAILED (see {@link writeFailure}).
 */
export async function writeContract(
  ctx: WorkflowContext,
  label: string,
  write: ContractWrite,
): Promise<TransactionResult> {
  const result = await ctx
    .child(chainTransaction, {
      chainId: write.chainId,
      signerId: write.signerId,
      to: write.to,
      data: write.data,
      valueWei: write.valueWei ?? "0",
      attribution: ATTRIBUTION,
      readAfterWrite: write.readAfterWrite ?? false,
      ...(write.fundingDeadline ? { fundingDeadline: write.fundingDeadline } : {}),
    })
    .catch((error: unknown) => {
      throw writeFailure(label, error);
    });
  if (result.verdict !== "confirmed") {
    throw new BusinessError(WRITE_REVERTED, `${label}: transaction ${result.hash} reverted`, {
      step: label,
      hash: result.hash,
      blockNumber: result.blockNumber,
    });
  }
  return result;
}

/**
 * A failed write as the domain workflow's own failure: the lifecycle's code and details at the top
 * level, so an operator reads the cause (GAS_REQUIRED and its shortfall) where every failure's code
 * is, with the write's `step` label and the lifecycle execution (`childExecutionId`) to open next.
 * Anything else (a park of the turn, above all) passes through unchanged.
 */
function writeFailure(label: string, error: unknown): unknown {
  if (!(error instanceof ChildWorkflowError)) return error;
  const failure = error.childFailure;
  return new BusinessError(
    failure.code,
    `${label}: ${failure.message}`,
    { ...failure.details, step: label, childExecutionId: error.childExecutionId },
    failure.retryable,
  );
}

export interface ContractDeployment {
  chainId: number;
  signerId: string;
  /** Creation bytecode with the ABI-encoded constructor arguments appended. */
  initCode: Hex;
  /**
   * Names this deployment for good: the same salt and init code always give the same address, so
   * a deployment re-run after a crash finds its contract instead of creating a second one.
   */
  salt: string;
  /** Wait for gas funding of the deployment until this instant instead of failing with GAS_REQUIRED. */
  fundingDeadline?: string;
  readAfterWrite?: boolean;
}

export interface DeployedContract {
  address: ChainAddress;
  /** The deployment's transaction; null when the contract was already there (nothing was sent). */
  transaction: TransactionResult | null;
}

/**
 * Deploys a contract through the CREATE2 deployer at an address fixed by (salt, init code). A
 * step first journals whether code is already there (a fact), then the body decides: deploy, or
 * record that it exists. A second deployment for the same salt can never happen.
 */
export async function deployContract(
  ctx: WorkflowContext,
  label: string,
  deployment: ContractDeployment,
): Promise<DeployedContract> {
  const salt = saltOf(deployment.salt);
  const address = deploymentAddress(deployment);
  const present = await ctx.step(`${label}.present`, () => hasCode(ctx, deployment.chainId, address));
  if (present) return { address, transaction: null };
  const transaction = await writeContract(ctx, label, {
    chainId: deployment.chainId,
    signerId: deployment.signerId,
    to: CREATE2_DEPLOYER,
    data: concatHex([salt, deployment.initCode]),
    ...(deployment.fundingDeadline ? { fundingDeadline: deployment.fundingDeadline } : {}),
    ...(deployment.readAfterWrite ? { readAfterWrite: true } : {}),
  });
  const deployed = await ctx.step(`${label}.verify`, () => hasCode(ctx, deployment.chainId, address));
  if (!deployed) {
    throw new BusinessError(
      FLOW_SUPPORT_ERRORS.CONTRACT_NOT_DEPLOYED,
      `${label}: no code at ${address} after ${transaction.hash}`,
      {
        address,
        hash: transaction.hash,
      },
    );
  }
  return { address, transaction };
}

/**
 * The address {@link deployContract} deploys `deployment` at, known before anything is sent (a
 * workflow can record it first). The lifecycle appends the attribution suffix to the calldata, so
 * the deployer receives it as the tail of the init code (constructor arguments decode from fixed
 * offsets and ignore it): the address is that of the init code as sent.
 */
export function deploymentAddress(deployment: Pick<ContractDeployment, "initCode" | "salt">): ChainAddress {
  return fromChecksummed(
    getContractAddress({
      opcode: "CREATE2",
      from: CREATE2_DEPLOYER,
      salt: saltOf(deployment.salt),
      bytecode: concatHex([deployment.initCode, attributionSuffix(ATTRIBUTION)]),
    }),
  );
}

/** The 32-byte CREATE2 salt of a deployment name. */
export function saltOf(name: string): Hex {
  return keccak256(toHex(name));
}

/** True when the address holds contract code at the chain's latest block. */
export async function hasCode(services: ServiceLookup, chainId: number, address: Address): Promise<boolean> {
  const code = await services.service(chainAccessService).chains.get(chainId).public.getCode({ address });
  return code !== undefined && code !== "0x";
}
