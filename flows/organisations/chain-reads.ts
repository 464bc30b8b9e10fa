import { chainAccessService } from "../../src/chain/lifecycle/chain-access.js";
import type { ServiceLookup } from "../../src/engine/services.js";

/** The chain's latest block number, from its configured node (CHAIN_UNKNOWN for an unknown chain). */
export async function chainHead(services: ServiceLookup, chainId: number): Promise<bigint> {
  return services.service(chainAccessService).chains.get(chainId).public.getBlockNumber();
}
