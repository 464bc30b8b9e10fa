import type { Pool } from "pg";
import { addressKey } from "../../values/address.js";
import type { Erc20BalanceRead, LedgerChainHealth, LedgerReads } from "../ledger-reads.js";

/** Fully indexed height of the `ledger_chains c` row (see indexedHeight). */
const INDEXED_HEIGHT = `LEAST(c.indexed_height, COALESCE(
  (SELECT min(r.next_block) - 1 FROM ledger_ranges r WHERE r.chain_id = c.chain_id AND r.completed_at IS NULL),
  c.indexed_height))`;

/** Reads of the Ledger Index's read model: only rows the index holds now (reverted rows are gone). */
export class PgLedgerReads implements LedgerReads {
  constructor(private readonly pool: Pool) {}

  /**
   * The height up to which `chainId` is fully indexed, or null before the tail first ran: the
   * live tail's checkpoint, lowered to just below the first block an open catch-up range has
   * not committed yet (history under the tail's anchor counts only once caught up).
   */
  async indexedHeight(chainId: number): Promise<bigint | null> {
    const { rows } = await this.pool.query(
      `SELECT ${INDEXED_HEIGHT}::text AS h FROM ledger_chains c WHERE c.chain_id = $1`,
      [chainId],
    );
    return rows[0] ? BigInt(rows[0].h) : null;
  }

  /**
   * `holder`'s balance of `token` and the token's supply. With `throughBlock` (a removed
   * contract's removal height) it is summed from the transfers up to that block, so what another
   * organisation's tracking added later does not show; otherwise it is the folded balance.
   */
  async erc20Balance(
    chainId: number,
    token: string,
    holder: string,
    throughBlock: bigint | null,
  ): Promise<Erc20BalanceRead> {
    const t = addressKey(token);
    const h = addressKey(holder);
    if (throughBlock === null) {
      const { rows } = await this.pool.query(
        `SELECT (SELECT balance::text FROM ledger_erc20_balances WHERE chain_id = $1 AND token = $2 AND holder = $3) AS balance,
                (SELECT total_supply::text FROM ledger_erc20_supplies WHERE chain_id = $1 AND token = $2) AS supply,
                (SELECT indexed_height::text FROM ledger_chains WHERE chain_id = $1) AS height`,
        [chainId, t, h],
      );
      const r = rows[0];
      return { balance: r.balance ?? "0", totalSupply: r.supply ?? "0", asOfBlock: r.height ?? "0" };
    }
    const { rows } = await this.pool.query(
      `SELECT COALESCE(sum(CASE WHEN to_address = $3 THEN value ELSE 0 END)
                     - sum(CASE WHEN from_address = $3 THEN value ELSE 0 END), 0)::text AS balance,
              COALESCE(sum(CASE WHEN from_address = $5 THEN value ELSE 0 END)
                     - sum(CASE WHEN to_address = $5 THEN value ELSE 0 END), 0)::text AS supply
       FROM ledger_erc20_transfers WHERE chain_id = $1 AND token = $2 AND block_number <= $4`,
      [chainId, t, h, throughBlock.toString(), "0x0000000000000000000000000000000000000000"],
    );
    return { balance: rows[0].balance, totalSupply: rows[0].supply, asOfBlock: throughBlock.toString() };
  }

  /** Health of every chain the index has a checkpoint for, by chain id. */
  async health(): Promise<LedgerChainHealth[]> {
    const { rows } = await this.pool.query(
      `SELECT c.chain_id, c.head_height::text AS head, ${INDEXED_HEIGHT}::text AS indexed,
              GREATEST(c.head_height - ${INDEXED_HEIGHT}, 0)::int AS lag_blocks,
              GREATEST(extract(epoch FROM c.head_block_time - c.indexed_block_time), 0)::float AS lag_seconds,
              c.last_reorg_depth, c.last_reorg_at, c.wait_reason, c.wait_detail, c.wait_since, c.updated_at,
              (SELECT count(*) FROM ledger_ranges r WHERE r.chain_id = c.chain_id AND r.completed_at IS NULL)::int AS open_ranges
       FROM ledger_chains c ORDER BY c.chain_id`,
    );
    return rows.map((r) => ({
      chainId: r.chain_id,
      headHeight: r.head,
      indexedHeight: r.indexed,
      lagBlocks: r.lag_blocks,
      lagSeconds: r.lag_seconds,
      lastReorgDepth: r.last_reorg_depth,
      lastReorgAt: r.last_reorg_at ? new Date(r.last_reorg_at).toISOString() : null,
      openRanges: r.open_ranges,
      waiting: r.wait_reason
        ? { reason: r.wait_reason, detail: r.wait_detail, since: new Date(r.wait_since).toISOString() }
        : null,
      updatedAt: new Date(r.updated_at).toISOString(),
    }));
  }
}
