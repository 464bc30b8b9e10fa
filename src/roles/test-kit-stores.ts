import type { Pool } from "pg";
import type { LedgerReads } from "../ledger-index/ledger-reads.js";
import { PgLedgerReads } from "../ledger-index/store/reads.js";
import { PgApiKeys } from "../store/pg-api-keys.js";
import { PgApprovals } from "../store/pg-approvals.js";
import { PgExecutionReads } from "../store/pg-execution-reads.js";

/** The stores the public test kit (src/testing) drives and reads runs with. */
export interface TestKitStores {
  /** Issues the API keys of the people a test acts as. */
  keys: PgApiKeys;
  /** Reads a run's stored input for its recorded history. */
  reads: PgExecutionReads;
  /** Casts votes as the Platform API does. */
  approvals: PgApprovals;
  /** The Ledger Index's heights the kit's chain boundary waits on. */
  ledger: LedgerReads;
}

/** Builds the test kit's stores on its pool, as the api role builds the Platform API's. */
export function createTestKitStores(pool: Pool): TestKitStores {
  return {
    keys: new PgApiKeys(pool),
    reads: new PgExecutionReads(pool),
    approvals: new PgApprovals(pool),
    ledger: new PgLedgerReads(pool),
  };
}
