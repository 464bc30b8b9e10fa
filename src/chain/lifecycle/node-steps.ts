import {
  type Address,
  BaseError,
  type Hex,
  keccak256,
  type PublicClient,
  TransactionNotFoundError,
} from "viem";
import { z } from "zod";
import { TenorError } from "../../errors/tenor-error.js";
import {
  type ChainRef,
  decodeOrThrow,
  type GasPrice,
  gasPriceApi,
  gasPriceUint256,
  type NativeValue,
  nativeValueUint256,
  nativeWeiApi,
} from "../../values/index.js";
import { CHAIN_ERRORS } from "../chain-error-codes.js";
import { EntryPointDeposits } from "../contracts/artifacts.js";
import type { LocalKeySigner } from "../signers/signer.js";
import type { Fees } from "./fee-bump.js";

/**
 * The node-facing work of the lifecycle, each a function one journaled step runs. Amounts cross
 * here only through the chain codecs of src/values.
 */

/** The journal shape of an estimate: gas units and both fee fields in wei (typed on decode). */
export function estimateSchema<C extends number>(chain: ChainRef<C>) {
  return z.object({
    gas: z.string(),
    maxFeePerGas: gasPriceApi(chain, "wei"),
    maxPriorityFeePerGas: gasPriceApi(chain, "wei"),
  });
}

export interface Estimate<C extends number = number> extends Fees<C> {
  gas: string;
}

export function toWei<C extends number>(chain: ChainRef<C>, price: GasPrice<C>): bigint {
  return z.encode(gasPriceUint256(chain), price);
}

export function valueWei<C extends number>(chain: ChainRef<C>, value: NativeValue<C>): bigint {
  return z.encode(nativeValueUint256(chain), value);
}

export function nativeFromWei<C extends number>(chain: ChainRef<C>, wei: bigint): NativeValue<C> {
  return nativeValueUint256(chain).parse(wei);
}

export function parseValue<C extends number>(chain: ChainRef<C>, text: string): NativeValue<C> {
  return decodeOrThrow(nativeWeiApi(chain), text, "valueWei");
}

/** Suggested fees from the node, typed. */
export async function suggestFees<C extends number>(
  client: PublicClient,
  chain: ChainRef<C>,
): Promise<Fees<C>> {
  const fees = await client.estimateFeesPerGas();
  return {
    maxFeePerGas: gasPriceUint256(chain).parse(fees.maxFeePerGas),
    maxPriorityFeePerGas: gasPriceUint256(chain).parse(fees.maxPriorityFeePerGas),
  };
}

/**
 * Gas units for the call and the node's fees. A sender that cannot yet pay the value still gets
 * an estimate (gas does not depend on the balance for a plain call), so the funding wait can name
 * the amount it needs.
 */
export async function estimate<C extends number>(
  client: PublicClient,
  chain: ChainRef<C>,
  call: { from: Address; to: Address | undefined; data: Hex; value: bigint; gasLimit?: string },
): Promise<Estimate<C>> {
  const fees = await suggestFees(client, chain);
  if (call.gasLimit !== undefined) return { gas: call.gasLimit, ...fees };
  const ask = (value: bigint) =>
    client.estimateGas({ account: call.from, to: call.to, data: call.data, value });
  let gas: bigint;
  try {
    gas = await ask(call.value);
  } catch (error) {
    if (!isInsufficientFunds(error)) throw error;
    gas = await ask(0n);
  }
  return { gas: gas.toString(), ...fees };
}

/** What the paying party holds: the sender's balance, or a paymaster's EntryPoint deposit. */
export async function payerBalance(
  client: PublicClient,
  payer:
    | { kind: "balance"; address: Address }
    | { kind: "entryPointDeposit"; entryPoint: Address; account: Address },
): Promise<bigint> {
  if (payer.kind === "balance") return client.getBalance({ address: payer.address });
  return client.readContract({
    address: payer.entryPoint,
    abi: EntryPointDeposits.abi,
    functionName: "balanceOf",
    args: [payer.account],
  });
}

/** Signs one attempt; the raw bytes and their hash are what the journal keeps before broadcast. */
export async function signAttempt<C extends number>(
  signer: LocalKeySigner,
  chain: ChainRef<C>,
  tx: { nonce: number; to: Address | undefined; data: Hex; value: bigint; gas: string; fees: Fees<C> },
): Promise<{ raw: Hex; hash: Hex }> {
  const raw = await signer.signTransaction({
    chainId: chain.id,
    type: "eip1559",
    nonce: tx.nonce,
    to: tx.to,
    data: tx.data,
    value: tx.value,
    gas: BigInt(tx.gas),
    maxFeePerGas: toWei(chain, tx.fees.maxFeePerGas),
    maxPriorityFeePerGas: toWei(chain, tx.fees.maxPriorityFeePerGas),
  });
  return { raw, hash: keccak256(raw) };
}

export type BroadcastOutcome = "sent" | "known" | "nonce-used" | "underpriced";

/**
 * Broadcasts journaled bytes, reconciling first: a node that already knows the hash (an earlier
 * turn sent it and crashed before its checkpoint) is not sent it again. A nonce already used is
 * not an error here: one of this intent's attempts may hold it, and the watcher reconciles every
 * hash. Insufficient funds is retryable (a node that lags behind a funding); refusals no retry
 * fixes are TX_REFUSED.
 */
export async function broadcast(
  client: PublicClient,
  signed: { raw: Hex; hash: Hex },
): Promise<BroadcastOutcome> {
  if (await knownToNode(client, signed.hash)) return "known";
  try {
    await client.sendRawTransaction({ serializedTransaction: signed.raw });
    return "sent";
  } catch (error) {
    const text = errorText(error);
    if (/already known|known transaction|already imported/i.test(text)) return "known";
    if (/nonce too low|nonce has already been used/i.test(text)) return "nonce-used";
    if (/underpriced/i.test(text)) return "underpriced";
    if (isInsufficientFunds(error)) {
      throw new TenorError(CHAIN_ERRORS.GAS_REQUIRED, `the node refused ${signed.hash}: insufficient funds`, {
        retryable: true,
        details: { hash: signed.hash },
      });
    }
    if (/intrinsic gas|exceeds block gas limit|invalid sender|chain id/i.test(text)) {
      throw new TenorError(
        CHAIN_ERRORS.TX_REFUSED,
        `the node refused ${signed.hash}: ${text.slice(0, 200)}`,
        {
          details: { hash: signed.hash },
        },
      );
    }
    throw error;
  }
}

async function knownToNode(client: PublicClient, hash: Hex): Promise<boolean> {
  try {
    await client.getTransaction({ hash });
    return true;
  } catch (error) {
    if (error instanceof TransactionNotFoundError) return false;
    throw error;
  }
}

function isInsufficientFunds(error: unknown): boolean {
  return /insufficient funds|InsufficientFunds/i.test(errorText(error));
}

function errorText(error: unknown): string {
  if (error instanceof BaseError) return `${error.shortMessage} ${error.details ?? ""} ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
