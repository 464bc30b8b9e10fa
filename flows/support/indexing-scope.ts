import { defineService } from "../../src/engine/services.js";

/**
 * What a workflow changes in the Ledger Index's scope (docs/ledger-index.md, "Scope"): the contracts
 * the platform tracks per chain and organisation. Each call is durable when it resolves, and is safe
 * to repeat (adding a tracked contract returns its live row), so a step re-run after a crash changes
 * nothing twice. The organisation is always the execution's.
 */
export type ScopeKind = "erc20" | "price-feed" | "price-resolver" | "system-settings";

export interface TrackedContract {
  chainId: number;
  orgId: string;
  address: string;
  kind: ScopeKind;
}

export interface IndexingScope {
  /** Tracks `contract` from `fromHeight` (its deployment block). */
  add(contract: TrackedContract, fromHeight: bigint): Promise<void>;
  /** Stops tracking at `atHeight` (its rows up to that height stay). */
  remove(contract: TrackedContract, atHeight: bigint): Promise<void>;
  /** Removes `old` at `atHeight` and adds `replacement` from `fromHeight` in one transaction. */
  replace(
    old: TrackedContract,
    atHeight: bigint,
    replacement: TrackedContract,
    fromHeight: bigint,
  ): Promise<void>;
  /** The live tracked contracts of an organisation on a chain (optionally of one kind). */
  live(chainId: number, orgId: string, kind?: ScopeKind): Promise<TrackedContract[]>;
}

/** Provided by the runner's composition root (workers/application.ts) over the index's scope table. */
export const indexingScopeService = defineService<IndexingScope>("ledger.indexing-scope");
