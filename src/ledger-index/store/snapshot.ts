import type { Pool } from "pg";
import { addressKey } from "../../values/address.js";

/** One holder's balance at the snapshot height, in the token's base units (decimal string). */
export interface SnapshotHolder {
  /** Lowercase 0x address. */
  holder: string;
  balance: string;
}

export interface HolderSnapshotRead {
  /**
   * Whether the organisation tracked the token at the height (an `erc20` scope row added at or
   * below it and not removed below it). Without that the index may not hold the token's history,
   * so no holders are read.
   */
  tracked: boolean;
  /** Holders with a positive balance at the height, in address order; the zero address never. */
  holders: SnapshotHolder[];
}

const ZERO = "0x0000000000000000000000000000000000000000";

/**
 * The holders of an ERC-20 token at a block height, summed from the indexed Transfer rows up to
 * that height (docs/corporate-actions.md, "Record date and snapshot"): the folded balances table
 * holds only the latest state. The caller must first wait until the index has the height
 * (`waitForIndexed`): rows above it may still arrive, rows at or below it no longer change unless
 * a reorganisation rolls the height back.
 */
export class PgLedgerSnapshot {
  constructor(private readonly pool: Pool) {}

  async holdersAt(query: {
    chainId: number;
    orgId: string;
    token: string;
    height: bigint;
  }): Promise<HolderSnapshotRead> {
    const token = addressKey(query.token);
    const height = query.height.toString();
    const scope = await this.pool.query(
      `SELECT 1 FROM ledger_scope
       WHERE chain_id = $1 AND org_id = $2 AND address = $3 AND kind = 'erc20'
         AND added_height <= $4 AND (removed_height IS NULL OR removed_height >= $4)
       LIMIT 1`,
      [query.chainId, query.orgId, token, height],
    );
    if (scope.rowCount === 0) return { tracked: false, holders: [] };
    const { rows } = await this.pool.query<{ holder: string; balance: string }>(
      `SELECT holder, sum(delta)::text AS balance FROM (
         SELECT to_address AS holder, value AS delta FROM ledger_erc20_transfers
         WHERE chain_id = $1 AND token = $2 AND block_number <= $3
         UNION ALL
         SELECT from_address, -value FROM ledger_erc20_transfers
         WHERE chain_id = $1 AND token = $2 AND block_number <= $3
       ) moves
       WHERE holder <> $4
       GROUP BY holder HAVING sum(delta) > 0
       ORDER BY holder`,
      [query.chainId, token, height, ZERO],
    );
    return { tracked: true, holders: rows };
  }
}
