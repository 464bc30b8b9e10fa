import type { Pool } from "pg";
import type { LedgerIndexStores } from "../ledger-index/ledger-indexer.js";
import type { LedgerReads } from "../ledger-index/ledger-reads.js";
import { PgLedgerIndex } from "../ledger-index/store/chain-checkpoint.js";
import { PgLedgerRanges } from "../ledger-index/store/ranges.js";
import { PgLedgerReads } from "../ledger-index/store/reads.js";
import { PgLedgerScope } from "../ledger-index/store/scope.js";

/** The stores the Ledger Index's ingest writes through, over `pool`. */
export function ledgerIndexStores(pool: Pool): LedgerIndexStores {
  return { index: new PgLedgerIndex(pool), scope: new PgLedgerScope(pool), ranges: new PgLedgerRanges(pool) };
}

/**
 * The Ledger Index's reads over `pool`, for a composition outside the roles that hands them to
 * the layers reading the index without owning it (the test kit's chain boundary).
 */
export function ledgerIndexReads(pool: Pool): LedgerReads {
  return new PgLedgerReads(pool);
}
