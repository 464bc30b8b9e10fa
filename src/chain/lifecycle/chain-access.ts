import { defineService } from "../../engine/services.js";
import type { EntityClient } from "../../keyed/entity-client.js";
import { CHAIN_ERRORS } from "../chain-error-codes.js";
import { nonceEntity } from "../nonce-entity.js";
import type { ChainClients } from "../rpc-clients.js";
import type { SignerRegistry } from "../signers/signer-registry.js";

/** Reserves the next nonce of (chain, sender); `commandId` makes a repeated ask return the same nonce. */
export type NonceReserver = (request: {
  chainId: number;
  sender: string;
  floor: number;
  commandId: string;
}) => Promise<number>;

/** What the transaction lifecycle's steps reach outside the journal: nodes, signers, nonces. */
export interface ChainAccess {
  chains: ChainClients;
  signers: SignerRegistry;
  reserveNonce: NonceReserver;
  /** The organisation an execution was started for (from the caller's key, never from input). */
  executionOrg: (executionId: string) => Promise<string | null>;
}

/**
 * The runner's chain clients, signers and nonces, as a service (src/engine/services.ts): the
 * runner role provides it (src/chain/runner-chain-boundary.ts); a workflow that writes to a chain
 * declares it and reads it through its context, inside the steps that reach the chain.
 */
export const chainAccessService = defineService<ChainAccess>("chain.access");

/** Nonce reservation through the keyed nonce entity (one sender's commands run one at a time). */
export function entityNonceReserver(client: EntityClient): NonceReserver {
  return async ({ chainId, sender, floor, commandId }) =>
    (await client.send(nonceEntity, "reserve", { chainId, sender, floor }, { commandId })).nonce;
}
