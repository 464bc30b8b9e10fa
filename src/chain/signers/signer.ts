import type { Address, Hex, TransactionSerializableEIP1559 } from "viem";

/**
 * A local-key signer: Tenor reserves the nonce, signs with the key it holds, and broadcasts the
 * raw transaction itself.
 */
export interface LocalKeySigner {
  readonly kind: "local";
  readonly id: string;
  readonly address: Address;
  /** Organisation allowed to use it; undefined: a platform signer. */
  readonly orgId: string | undefined;
  /** Signs a fully specified EIP-1559 transaction (nonce and fees included) into raw bytes. */
  signTransaction(tx: TransactionSerializableEIP1559): Promise<Hex>;
  /** Signs a 32-byte hash as an EIP-191 message: how an ERC-4337 account's owner signs a UserOperation. */
  signUserOperationHash(hash: Hex): Promise<Hex>;
}

/** A call a custody provider is asked to sign and broadcast. */
export interface CustodyIntent {
  /** Tenor's stable id for the operation: resubmitting it never creates a second intent. */
  externalId: string;
  chainId: number;
  to: Address;
  /** Calldata, attribution suffix included. */
  data: Hex;
  /** Value in wei as a decimal integer string (the wire form the provider takes). */
  valueWei: string;
}

/** What a custody provider reports for one intent, normalised. */
export type CustodyState =
  | { status: "unknown" }
  | { status: "pending_approval" }
  | { status: "approved" }
  | { status: "broadcast"; txHash: Hex }
  | { status: "confirmed"; txHash: Hex }
  | { status: "rejected"; reason: string }
  | { status: "failed"; reason: string; txHash?: Hex };

/**
 * A custody provider: it signs, allocates its own nonces and broadcasts (provider-native
 * broadcast). Tenor only submits intents and reads their status by external id.
 */
export interface CustodySigner {
  readonly kind: "custody";
  readonly id: string;
  readonly address: Address;
  readonly orgId: string | undefined;
  /** `organisation` when the signer belongs to one organisation, else `platform`. */
  readonly scope: "organisation" | "platform";
  /** Status polls before an intent counts as lost, and their period in ms. */
  readonly pollBudget: number;
  readonly pollIntervalMs: number;
  /** Submits (idempotent by external id) and returns the provider's state right after. */
  submit(intent: CustodyIntent): Promise<CustodyState>;
  status(externalId: string): Promise<CustodyState>;
}

/** Every signer, behind one interface; `kind` says who broadcasts and who owns the nonce. */
export type Signer = LocalKeySigner | CustodySigner;
