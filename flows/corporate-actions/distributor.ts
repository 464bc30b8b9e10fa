import {
  type Address,
  encodeAbiParameters,
  encodeDeployData,
  encodeFunctionData,
  type Hex,
  keccak256,
} from "viem";
import { Distributor, TestToken } from "../../src/chain/contracts/artifacts.js";
import { chainAccessService } from "../../src/chain/lifecycle/chain-access.js";
import type { ServiceLookup } from "../../src/engine/services.js";
import { addressText } from "../../src/values/index.js";

/**
 * The Distributor contract as the corporate-action flow uses it (contracts/Distributor.sol): one
 * per (organisation, paying wallet), deployed by CREATE2 so every action of that payer finds the
 * same contract, owned by the payer, which approves it to move the payment token.
 */

/** Names the payer's Distributor for good: a re-run finds it instead of deploying a second. */
export function distributorSalt(orgId: string, payer: string): string {
  return `corporate-actions:distributor:${orgId}:${addressText(payer)}`;
}

export function distributorInitCode(payer: Address): Hex {
  return encodeDeployData({ abi: Distributor.abi, bytecode: Distributor.bytecode, args: [payer] });
}

/**
 * A batch's id: hash of the action (organisation and its action id) and the batch index, so a
 * re-run of the same action (a new execution after a failure) meets the same ids and the
 * contract refuses to pay any of them twice.
 */
export function batchId(orgId: string, actionId: string, index: number): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: "string" }, { type: "string" }, { type: "string" }, { type: "uint256" }],
      ["tenor.corporate-action", orgId, actionId, BigInt(index)],
    ),
  );
}

export function distributeCall(id: Hex, token: Address, holders: Address[], amounts: bigint[]): Hex {
  return encodeFunctionData({
    abi: Distributor.abi,
    functionName: "distribute",
    args: [id, token, holders, amounts],
  });
}

/** An unlimited allowance: only the owner can make the Distributor spend it (see docs). */
export function approveCall(spender: Address): Hex {
  return encodeFunctionData({
    abi: TestToken.abi,
    functionName: "approve",
    args: [spender, 2n ** 256n - 1n],
  });
}

/** What a batch write depends on, read just before it (a fact for the journal, base units as strings). */
export async function readBatchState(
  services: ServiceLookup,
  chainId: number,
  distributor: Address,
  token: Address,
  payer: Address,
  id: Hex,
): Promise<{ paid: boolean; payerBalance: string }> {
  const client = services.service(chainAccessService).chains.get(chainId).public;
  const [paid, balance] = await Promise.all([
    client.readContract({ address: distributor, abi: Distributor.abi, functionName: "paid", args: [id] }),
    client.readContract({ address: token, abi: TestToken.abi, functionName: "balanceOf", args: [payer] }),
  ]);
  return { paid, payerBalance: balance.toString() };
}

/** The payer's allowance to the Distributor in the payment token (base units). */
export async function readAllowance(
  services: ServiceLookup,
  chainId: number,
  token: Address,
  payer: Address,
  distributor: Address,
): Promise<string> {
  const client = services.service(chainAccessService).chains.get(chainId).public;
  const allowance = await client.readContract({
    address: token,
    abi: TestToken.abi,
    functionName: "allowance",
    args: [payer, distributor],
  });
  return allowance.toString();
}

/** decimals() and symbol() of an ERC-20. */
export async function readTokenFacts(
  services: ServiceLookup,
  chainId: number,
  token: Address,
): Promise<{ decimals: number; symbol: string }> {
  const client = services.service(chainAccessService).chains.get(chainId).public;
  const [decimals, symbol] = await Promise.all([
    client.readContract({ address: token, abi: TestToken.abi, functionName: "decimals" }),
    client.readContract({ address: token, abi: TestToken.abi, functionName: "symbol" }),
  ]);
  return { decimals: Number(decimals), symbol };
}
