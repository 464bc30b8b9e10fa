import { chainRuntime } from "../../src/chain/lifecycle/chain-runtime.js";

/** The chain's latest block number, from its configured node (CHAIN_UNKNOWN for an unknown chain). */
export async function chainHead(chainId: number): Promise<bigint> {
  return chainRuntime().chains.get(chainId).public.getBlockNumber();
}
