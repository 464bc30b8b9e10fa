import type { Pool, PoolClient } from "pg";
import { LEDGER_INDEX_ERRORS } from "../../errors/ledger-index-errors.js";
import { TenorError } from "../../errors/tenor-error.js";
import { withTransaction } from "../../store/with-transaction.js";
import type { LedgerScopeKind } from "../ledger-scope.js";
import { insertLedgerLogs, type LedgerLogs, logOrigins } from "./domain-logs.js";

/** A catch-up range as leased to one replica. */
export interface RangeLease {
  id: string;
  chainId: number;
  address: string;
  /** The scope kinds the address is tracked as (any organisation): which events the range reads. */
  kinds: LedgerScopeKind[];
  fromBlock: bigint;
  toBlock: bigint;
  /** First block not yet committed. */
  nextBlock: bigint;
  /** The claim's epoch: a commit under any other is refused. */
  epoch: string;
}

/**
 * Historical catch-up ranges (docs/ledger-index.md, "Catch-up"): any indexer replica claims an
 * unfinished range whose lease is free or expired, commits its progress under the claim's epoch
 * (each commit renews the lease) and marks it complete.
 */
export class PgLedgerRanges {
  constructor(private readonly pool: Pool) {}

  /**
   * Leases one open range of `chainIds` (free, or its lease expired) to `owner` for `leaseMs`,
   * lowest id first; null when there is none. Concurrent claims skip each other's rows.
   */
  async claim(chainIds: readonly number[], owner: string, leaseMs: number): Promise<RangeLease | null> {
    const { rows } = await this.pool.query(
      `UPDATE ledger_ranges r SET lease_owner = $2, lease_epoch = r.lease_epoch + 1,
         lease_expires_at = now() + make_interval(secs => $3::float / 1000)
       WHERE r.id = (SELECT id FROM ledger_ranges
                     WHERE chain_id = ANY($1::int[]) AND completed_at IS NULL
                       AND (lease_expires_at IS NULL OR lease_expires_at < now())
                     ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING r.id::text, r.chain_id, r.address, r.from_block::text, r.to_block::text,
                 r.next_block::text, r.lease_epoch::text,
                 ARRAY(SELECT DISTINCT s.kind FROM ledger_scope s
                       WHERE s.chain_id = r.chain_id AND s.address = r.address ORDER BY s.kind) AS kinds`,
      [chainIds, owner, leaseMs],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      id: r.id,
      chainId: r.chain_id,
      address: r.address,
      kinds: r.kinds,
      fromBlock: BigInt(r.from_block),
      toBlock: BigInt(r.to_block),
      nextBlock: BigInt(r.next_block),
      epoch: r.lease_epoch,
    };
  }

  /**
   * Commits blocks [lease.nextBlock, through] of the range: the logs (checked against the live
   * tail's stored block hashes, so a log of a block that a rollback removed is refused), the new
   * cursor, and completion when `through` is the range's last block, all in one transaction that
   * also renews the lease. Returns the updated lease.
   *
   * @throws TenorError LEDGER_RANGE_LEASE_LOST when the range was claimed again since (logged by
   *   the caller; the commit is rolled back), LEDGER_CURSOR_MOVED (retryable) when a log's block
   *   is not the one the live tail holds at that height.
   */
  async commit(
    lease: RangeLease,
    through: bigint,
    logs: LedgerLogs,
    owner: string,
    leaseMs: number,
  ): Promise<RangeLease & { completed: boolean }> {
    return withTransaction(this.pool, async (client) => {
      // Ordered against the live tail's rollbacks, which update this row.
      await client.query("SELECT 1 FROM ledger_chains WHERE chain_id = $1 FOR SHARE", [lease.chainId]);
      const completed = through >= lease.toBlock;
      const { rows } = await client.query(
        `UPDATE ledger_ranges SET next_block = $3, lease_expires_at = now() + make_interval(secs => $4::float / 1000),
           completed_at = CASE WHEN $5 THEN now() END, completed_by = CASE WHEN $5 THEN $6 END
         WHERE id = $1 AND lease_epoch = $2 AND completed_at IS NULL RETURNING id`,
        [lease.id, lease.epoch, (through + 1n).toString(), leaseMs, completed, owner],
      );
      if (!rows[0])
        throw new TenorError(
          LEDGER_INDEX_ERRORS.LEDGER_RANGE_LEASE_LOST,
          `range ${lease.id} is no longer leased under epoch ${lease.epoch}: the commit is refused`,
          { details: { rangeId: lease.id, epoch: lease.epoch } },
        );
      await assertCanonical(client, lease.chainId, logs);
      await insertLedgerLogs(client, lease.chainId, logs);
      return { ...lease, nextBlock: through + 1n, completed };
    });
  }
}

/** Refuses logs whose block hash differs from the block the live tail stored at that height. */
async function assertCanonical(client: PoolClient, chainId: number, ledgerLogs: LedgerLogs): Promise<void> {
  const logs = logOrigins(ledgerLogs);
  if (logs.length === 0) return;
  const { rows } = await client.query(
    `SELECT b.height::text FROM ledger_blocks b
     JOIN unnest($2::bigint[], $3::text[]) AS l(height, hash) ON l.height = b.height
     WHERE b.chain_id = $1 AND b.hash <> l.hash LIMIT 1`,
    [chainId, logs.map((l) => l.blockNumber.toString()), logs.map((l) => l.blockHash)],
  );
  if (rows[0])
    throw new TenorError(
      LEDGER_INDEX_ERRORS.LEDGER_CURSOR_MOVED,
      `chain ${chainId}: block ${rows[0].height} was reorganised after the catch-up read it`,
      { retryable: true, details: { chainId, height: rows[0].height } },
    );
}
