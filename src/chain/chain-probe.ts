import { TenorError } from "../errors/tenor-error.js";
import { chainAddress } from "../values/address.js";
import { CHAIN_ERRORS } from "./chain-error-codes.js";
import type { ChainClients } from "./rpc-clients.js";

/**
 * What a request handler reads of a configured chain's node before it accepts something that
 * depends on the chain's state (the api's check of a tracked contract's start height). Each read
 * asks the node now: nothing is cached.
 */
export interface ChainProbe {
  /**
   * The chain's newest block number.
   * @throws TenorError CHAIN_UNKNOWN for a chain not configured; RPC_UNAVAILABLE (retryable) when the node does not answer.
   */
  head(chainId: number): Promise<bigint>;
  /** Whether `address` holds contract code at the newest block (same errors as {@link ChainProbe.head}). */
  hasCode(chainId: number, address: string): Promise<boolean>;
}

/** The probe over the configured chains' read clients. */
export function chainProbe(chains: ChainClients): ChainProbe {
  return {
    head: (chainId) => ask(chainId, "eth_blockNumber", () => chains.get(chainId).public.getBlockNumber()),
    async hasCode(chainId, address) {
      const code = await ask(chainId, "eth_getCode", () =>
        chains.get(chainId).public.getCode({ address: chainAddress(address, "address") }),
      );
      return code !== undefined && code !== "0x";
    },
  };
}

async function ask<T>(chainId: number, method: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof TenorError) throw error;
    throw new TenorError(
      CHAIN_ERRORS.RPC_UNAVAILABLE,
      `chain ${chainId}'s node did not answer ${method}: ${(error as Error).message.split("\n")[0]}`,
      { retryable: true, details: { chainId, method } },
    );
  }
}
