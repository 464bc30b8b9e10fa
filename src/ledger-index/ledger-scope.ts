/**
 * The kinds of contract the Ledger Index turns into domain rows: ERC-20 tokens (transfers, balances,
 * supply), price feeds (observations), price resolvers (staleness bounds, hence asset status) and
 * an organisation's system settings (docs/ledger-index.md, "Scope").
 */
export const LEDGER_SCOPE_KINDS = ["erc20", "price-feed", "price-resolver", "system-settings"] as const;
export type LedgerScopeKind = (typeof LEDGER_SCOPE_KINDS)[number];

/** One contract to track: the organisation comes from the caller's execution, never from input. */
export interface ScopeEntry {
  chainId: number;
  orgId: string;
  address: string;
  kind: LedgerScopeKind;
  /** First block whose logs count (the contract's deployment block, or 0). */
  fromHeight: bigint;
}

export interface ScopeRow {
  id: string;
  chainId: number;
  orgId: string;
  address: string;
  kind: LedgerScopeKind;
  addedHeight: bigint;
  removedHeight: bigint | null;
}

/** What the index's readers ask of the scope: which contracts an organisation tracks, or tracked. */
export interface LedgerScopeReads {
  /** The organisation's rows for one contract, newest first (live and removed). */
  rowsFor(chainId: number, orgId: string, address: string): Promise<ScopeRow[]>;
}

/** What the API asks of the scope: the reads, an organisation's live rows, and one addition. */
export interface LedgerScopeTracking extends LedgerScopeReads {
  /**
   * Starts tracking `entry` unless the organisation already tracks that contract as that kind on
   * that chain: then `added` is false and the live row is returned unchanged.
   */
  track(entry: ScopeEntry): Promise<{ row: ScopeRow; added: boolean }>;
  /** The organisation's live rows on `chainId` (of `kind` when given), oldest first. */
  liveRows(chainId: number, orgId: string, kind?: LedgerScopeKind): Promise<ScopeRow[]>;
}
