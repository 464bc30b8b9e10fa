import type { Pool } from "pg";
import type { LedgerIndexStores } from "../ledger-index/ledger-indexer.js";
import { PgLedgerIndex } from "../ledger-index/store/chain-checkpoint.js";
import { PgLedgerRanges } from "../ledger-index/store/ranges.js";
import { PgLedgerScope } from "../ledger-index/store/scope.js";

/** The stores the Ledger Index's ingest writes through, over `pool`. */
export function ledgerIndexStores(pool: Pool): LedgerIndexStores {
  return { index: new PgLedgerIndex(pool), scope: new PgLedgerScope(pool), ranges: new PgLedgerRanges(pool) };
}
