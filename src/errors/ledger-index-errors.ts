/** Stable codes of the Ledger Index's errors (docs/ledger-index.md). Never reworded once shipped. */
export const LEDGER_INDEX_ERRORS = Object.freeze({
  /** A scope entry names an unknown kind, a malformed address or heights out of order. */
  LEDGER_SCOPE_INVALID: "LEDGER_SCOPE_INVALID",
  /** An addition named a contract the organisation already tracks as that kind on that chain. */
  LEDGER_SCOPE_DUPLICATE: "LEDGER_SCOPE_DUPLICATE",
  /** A removal named a contract the organisation does not track on that chain. */
  LEDGER_SCOPE_NOT_FOUND: "LEDGER_SCOPE_NOT_FOUND",
  /** The live tail's checkpoint moved under it (another writer): the batch is dropped and re-read. */
  LEDGER_CURSOR_MOVED: "LEDGER_CURSOR_MOVED",
  /** A reorganisation reaches below every block the index keeps: an operator must rewind. */
  LEDGER_REORG_TOO_DEEP: "LEDGER_REORG_TOO_DEEP",
  /** A catch-up range was re-leased to another replica: this replica's commit is refused. */
  LEDGER_RANGE_LEASE_LOST: "LEDGER_RANGE_LEASE_LOST",
  /** A rewind named a chain without a checkpoint or a height above it. */
  LEDGER_REWIND_INVALID: "LEDGER_REWIND_INVALID",
  /**
   * An eth_getLogs answer its blocks do not confirm (a log missing, or one not in the block's
   * bloom): nothing of it is committed and the range is read again (retryable).
   */
  LEDGER_LOGS_UNVERIFIED: "LEDGER_LOGS_UNVERIFIED",
  /** The index did not reach the block within the wait's budget (retryable). */
  LEDGER_NOT_INDEXED: "LEDGER_NOT_INDEXED",
});

export type LedgerIndexErrorCode = (typeof LEDGER_INDEX_ERRORS)[keyof typeof LEDGER_INDEX_ERRORS];

declare module "./error-code-registry.js" {
  interface ErrorCodeRegistry {
    ledgerIndex: LedgerIndexErrorCode;
  }
}
