import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  getAddress,
  type Hex,
  parseEventLogs,
  zeroHash,
} from "viem";
import { ClaimRegistry } from "../../src/chain/contracts/artifacts.js";
import { chainAccessService } from "../../src/chain/lifecycle/chain-access.js";
import type { ServiceLookup } from "../../src/engine/services.js";
import { type Claim, claimKey } from "./schemas.js";

/**
 * What the claim batch reads from the chain, each as a step's recorded fact (docs/engine.md,
 * "Record facts, replay decisions"): the step says what it saw, the workflow decides. A transient
 * RPC failure throws and the step retries; a revert of a view call is a fact (not a registry).
 */

/** What the batch found at the registry address for the organisation's signer. */
export type RegistryFacts =
  | { registry: "no-code"; signer: Address; signerScope: SignerScope }
  | { registry: "not-a-claim-registry"; signer: Address; signerScope: SignerScope }
  | {
      registry: "claim-registry";
      signer: Address;
      signerScope: SignerScope;
      owner: Address;
      signerCanIssue: boolean;
    };

/** `organisation`: the signer belongs to the calling organisation; `platform`: to nobody. */
export type SignerScope = "organisation" | "platform";

/**
 * The signer `signerId` as the organisation may use it (SIGNER_UNKNOWN otherwise, a refusal) and
 * what the registry says about it.
 */
export async function inspectRegistry(
  services: ServiceLookup,
  orgId: string,
  chainId: number,
  registry: Address,
  signerId: string,
): Promise<RegistryFacts> {
  const access = services.service(chainAccessService);
  const signer = access.signers.forOrg(orgId, signerId);
  const signerScope: SignerScope = signer.orgId === undefined ? "platform" : "organisation";
  const client = access.chains.get(chainId).public;
  const code = await client.getCode({ address: registry });
  if (code === undefined || code === "0x")
    return { registry: "no-code", signer: signer.address, signerScope };
  try {
    const [owner, signerCanIssue] = await Promise.all([
      client.readContract({ address: registry, abi: ClaimRegistry.abi, functionName: "owner" }),
      client.readContract({
        address: registry,
        abi: ClaimRegistry.abi,
        functionName: "canIssue",
        args: [signer.address],
      }),
    ]);
    return { registry: "claim-registry", signer: signer.address, signerScope, owner, signerCanIssue };
  } catch (error) {
    if (isCallRefused(error))
      return { registry: "not-a-claim-registry", signer: signer.address, signerScope };
    throw error;
  }
}

/** A batch's claims as the registry holds them right now, and whether the signer may still write. */
export interface PresentClaims {
  signerCanIssue: boolean;
  /** Per claim of the batch, in order: the data hash on chain, or null when there is no claim. */
  onChain: (Hex | null)[];
}

export async function readPresentClaims(
  services: ServiceLookup,
  chainId: number,
  registry: Address,
  signer: Address,
  claims: readonly Claim[],
): Promise<PresentClaims> {
  const client = services.service(chainAccessService).chains.get(chainId).public;
  const [signerCanIssue, hashes] = await Promise.all([
    client.readContract({
      address: registry,
      abi: ClaimRegistry.abi,
      functionName: "canIssue",
      args: [signer],
    }),
    readHashes(services, chainId, registry, claims),
  ]);
  return { signerCanIssue, onChain: hashes };
}

/** What one write did: the claims its receipt says it added, and the sent claims' hashes after it. */
export interface WriteEffect {
  /** `subject/topic` (lower-case subject, decimal topic) of each ClaimAdded of this registry in the receipt. */
  added: string[];
  /** Per sent claim, in order: the data hash on chain at the receipt's block. */
  onChain: (Hex | null)[];
}

export async function readWriteEffect(
  services: ServiceLookup,
  chainId: number,
  registry: Address,
  hash: Hex,
  sent: readonly Claim[],
): Promise<WriteEffect> {
  const client = services.service(chainAccessService).chains.get(chainId).public;
  const receipt = await client.getTransactionReceipt({ hash });
  const events = parseEventLogs({ abi: ClaimRegistry.abi, eventName: "ClaimAdded", logs: receipt.logs });
  const added = events.filter((e) => getAddress(e.address) === registry).map((e) => claimKey(e.args));
  return { added, onChain: await readHashes(services, chainId, registry, sent, receipt.blockNumber) };
}

async function readHashes(
  services: ServiceLookup,
  chainId: number,
  registry: Address,
  claims: readonly Claim[],
  blockNumber?: bigint,
): Promise<(Hex | null)[]> {
  const hashes = await services
    .service(chainAccessService)
    .chains.get(chainId)
    .public.readContract({
      address: registry,
      abi: ClaimRegistry.abi,
      functionName: "claimHashes",
      args: [claims.map((c) => c.subject), claims.map((c) => BigInt(c.topic))],
      ...(blockNumber !== undefined ? { blockNumber } : {}),
    });
  return hashes.map((h) => (h === zeroHash ? null : h));
}

/** The call reached the node and the contract refused it or returned nothing: not a transient fault. */
function isCallRefused(error: unknown): boolean {
  return (
    error instanceof BaseError &&
    error.walk(
      (e) => e instanceof ContractFunctionRevertedError || e instanceof ContractFunctionZeroDataError,
    ) !== null
  );
}
