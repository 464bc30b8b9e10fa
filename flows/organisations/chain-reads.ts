import { chainRuntimeService } from "../../src/chain/lifecycle/chain-runtime.js";
import type { ServiceLookup } from "../../src/engine/services.js";

/** The chain's latest block number, from its configured node (CHAIN_UNKNOWN for an unknown chain). */
export async function chainHead(services: ServiceLookup, chainId: number): Promise<bigint> {
  return services.service(chainRuntimeService).chains.get(chainId).public.getBlockNumber();
}
