import { TenorError } from "../../errors/tenor-error.js";
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
export interface ChainRuntime {
  chains: ChainClients;
  signers: SignerRegistry;
  reserveNonce: NonceReserver;
  /** The organisation an execution was started for (from the caller's key, never from input). */
  executionOrg: (executionId: string) => Promise<string | null>;
}

let bound: ChainRuntime | undefined;

/**
 * Binds the runner's chain clients and signers for the lifecycle's steps. Workflows are module
 * definitions registered by name, so the runner's composition root binds their runtime once,
 * before it starts taking work; a step running without one is a retryable error (the execution
 * suspends and resumes on a runner that has it) rather than a wrong answer.
 */
export function bindChainRuntime(runtime: ChainRuntime): () => void {
  bound = runtime;
  return () => {
    if (bound === runtime) bound = undefined;
  };
}

export function chainRuntime(): ChainRuntime {
  if (!bound) {
    throw new TenorError(
      CHAIN_ERRORS.CHAIN_RUNTIME_MISSING,
      "this process has no chain runtime bound (runner role only)",
      {
        retryable: true,
      },
    );
  }
  return bound;
}

/** Nonce reservation through the keyed nonce entity (one sender's commands run one at a time). */
export function entityNonceReserver(client: EntityClient): NonceReserver {
  return async ({ chainId, sender, floor, commandId }) =>
    (await client.send(nonceEntity, "reserve", { chainId, sender, floor }, { commandId })).nonce;
}
