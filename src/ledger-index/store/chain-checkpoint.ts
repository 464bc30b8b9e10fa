import type { Pool, PoolClient } from "pg";
import { LEDGER_INDEX_ERRORS } from "../../errors/ledger-index-errors.js";
import { TenorError } from "../../errors/tenor-error.js";
import { type ShardFence, withShardFence } from "../../ownership/shard-fence.js";
import type { NodeWaitReason } from "../ledger-reads.js";
import { deleteDomainRowsAbove, insertLedgerLogs, type LedgerLogs } from "./domain-logs.js";
import { deleteTransfersAbove } from "./transfers.js";

/** A block as the live tail stores it. */
export interface LedgerBlock {
  height: bigint;
  hash: string;
  parentHash: string;
  /** The block's timestamp. */
  time: Date;
}

/** The live tail's checkpoint of one chain. */
export interface LedgerCursor {
  height: bigint;
  hash: string;
}

/** The head the tail saw when it committed (health: lag in blocks and seconds). */
export interface LedgerHead {
  height: bigint;
  time: Date;
}

/** One live-tail batch: blocks after the cursor, their logs, and the scope rows the logs were read for. */
export interface TailBatch {
  /** The cursor the batch was read from; the commit refuses when the checkpoint moved. */
  expected: LedgerCursor;
  /** Consecutive blocks expected.height + 1 .. n, each the parent of the next. */
  blocks: readonly LedgerBlock[];
  logs: LedgerLogs;
  /** Ids of the scope rows whose addresses the logs were read for (their catch-up spawns here). */
  scopeIds: readonly string[];
  head: LedgerHead;
  /** Blocks per spawned catch-up range. */
  rangeBlocks: number;
  /**
   * Stored blocks below this height are deleted with the batch: they are settled, so no rollback
   * can reach them and no catch-up log needs checking against them. Keeps `ledger_blocks` to about
   * the finality window.
   */
  pruneBelow: bigint;
}

/**
 * The Ledger Index's shard-owned writes (docs/ledger-index.md): every statement of the live tail
 * runs in `withShardFence`, so a write under a stale owner epoch is refused by the database, and
 * locks the chain's `ledger_chains` row first (catch-up commits take it FOR SHARE), so a rollback
 * and a catch-up commit are ordered by PostgreSQL.
 */
export class PgLedgerIndex {
  constructor(private readonly pool: Pool) {}

  /** The chain's checkpoint, or null before the tail first ran. */
  async cursor(chainId: number): Promise<LedgerCursor | null> {
    const { rows } = await this.pool.query(
      "SELECT indexed_height::text AS height, indexed_hash AS hash FROM ledger_chains WHERE chain_id = $1",
      [chainId],
    );
    return rows[0] ? { height: BigInt(rows[0].height), hash: rows[0].hash } : null;
  }

  /** The hash stored for `height`, or null when the tail never stored that block. */
  async blockHash(chainId: number, height: bigint): Promise<string | null> {
    const { rows } = await this.pool.query(
      "SELECT hash FROM ledger_blocks WHERE chain_id = $1 AND height = $2",
      [chainId, height.toString()],
    );
    return rows[0]?.hash ?? null;
  }

  /** The lowest block the tail keeps: no reorganisation can be rolled back below it. */
  async lowestBlock(chainId: number): Promise<bigint | null> {
    const { rows } = await this.pool.query(
      "SELECT min(height)::text AS h FROM ledger_blocks WHERE chain_id = $1",
      [chainId],
    );
    return rows[0]?.h ? BigInt(rows[0].h) : null;
  }

  /**
   * Anchors a chain's first checkpoint at a settled block (history below it is caught up in
   * ranges). Does nothing when the chain already has one. Fenced.
   */
  async anchor(fence: ShardFence, chainId: number, block: LedgerBlock, head: LedgerHead): Promise<void> {
    await withShardFence(this.pool, fence, async (client) => {
      const { rowCount } = await client.query(
        `INSERT INTO ledger_chains (chain_id, indexed_height, indexed_hash, indexed_block_time, head_height, head_block_time)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (chain_id) DO NOTHING`,
        [chainId, block.height.toString(), block.hash, block.time, head.height.toString(), head.time],
      );
      if (rowCount) await insertBlocks(client, chainId, [block]);
    });
  }

  /**
   * Commits one batch in one fenced transaction: the blocks, the logs the scope admits (transfers
   * folded into balances and supply, the other events as domain rows), the catch-up ranges of newly tracked contracts, and the new
   * checkpoint. Returns the rows inserted.
   *
   * @throws TenorError SHARD_EPOCH_STALE when the chain's shard was handed over;
   *   LEDGER_CURSOR_MOVED (retryable) when the checkpoint is no longer `batch.expected`.
   */
  async commitBatch(
    fence: ShardFence,
    chainId: number,
    batch: TailBatch,
  ): Promise<{ logs: number; ranges: number }> {
    const last = batch.blocks.at(-1);
    if (!last) return { logs: 0, ranges: 0 };
    return withShardFence(this.pool, fence, async (client) => {
      await lockCursor(client, chainId, batch.expected);
      await insertBlocks(client, chainId, batch.blocks);
      const first = batch.blocks[0] as LedgerBlock;
      const ranges = await spawnRanges(client, chainId, batch.scopeIds, first.height - 1n, batch.rangeBlocks);
      const logs = await insertLedgerLogs(client, chainId, batch.logs);
      await client.query("DELETE FROM ledger_blocks WHERE chain_id = $1 AND height < $2", [
        chainId,
        batch.pruneBelow.toString(),
      ]);
      await client.query(
        `UPDATE ledger_chains SET indexed_height = $2, indexed_hash = $3, indexed_block_time = $4,
           head_height = $5, head_block_time = $6, ${WAIT_CLEARED}, updated_at = now() WHERE chain_id = $1`,
        [
          chainId,
          last.height.toString(),
          last.hash,
          last.time,
          batch.head.height.toString(),
          batch.head.time,
        ],
      );
      return { logs, ranges };
    });
  }

  /**
   * Rolls the chain back to `ancestor` in one fenced transaction: every transfer (live tail's and
   * catch-up's) above it is deleted and taken out of balances and supply, every domain row and
   * block above it deleted (latest values are read from what remains, so they revert too), the
   * checkpoint moves to the ancestor and the reorganisation's depth is recorded.
   */
  async rollback(
    fence: ShardFence,
    chainId: number,
    expected: LedgerCursor,
    ancestor: LedgerCursor & { time: Date },
  ): Promise<{ depth: number; logs: number }> {
    return withShardFence(this.pool, fence, async (client) => {
      await lockCursor(client, chainId, expected);
      const logs =
        (await deleteTransfersAbove(client, chainId, ancestor.height)) +
        (await deleteDomainRowsAbove(client, chainId, ancestor.height));
      await client.query("DELETE FROM ledger_blocks WHERE chain_id = $1 AND height > $2", [
        chainId,
        ancestor.height.toString(),
      ]);
      const depth = Number(expected.height - ancestor.height);
      await client.query(
        `UPDATE ledger_chains SET indexed_height = $2, indexed_hash = $3, indexed_block_time = $4,
           last_reorg_depth = $5, last_reorg_at = now(), ${WAIT_CLEARED}, updated_at = now() WHERE chain_id = $1`,
        [chainId, ancestor.height.toString(), ancestor.hash, ancestor.time, depth],
      );
      return { depth, logs };
    });
  }

  /** The indexer shard's current owner epoch as a fence, or null when no replica ever owned it. */
  async ownerFence(shard: number): Promise<ShardFence | null> {
    const { rows } = await this.pool.query(
      "SELECT epoch::text FROM shard_owners WHERE domain = 'indexer' AND shard = $1",
      [shard],
    );
    return rows[0] ? { domain: "indexer", shard, epoch: rows[0].epoch } : null;
  }

  /**
   * The operator's way out of LEDGER_REORG_TOO_DEEP (docs/ledger-index.md, "Rewinding a chain"):
   * in one transaction fenced by the chain shard's current owner epoch, every transfer (taken back
   * out of balances and supply), domain row and stored block above `to.height` is deleted, and the
   * checkpoint set to `to` — the node's block at that height, now the only stored block — whatever
   * checkpoint the tail held. The tail's next step replays from there; a batch it read before is
   * refused (LEDGER_CURSOR_MOVED). Returns the rows removed and the old checkpoint.
   *
   * @throws TenorError SHARD_EPOCH_STALE when the shard changed owner meanwhile;
   *   LEDGER_SCOPE_INVALID when the chain has no checkpoint or `to` is above it.
   */
  async rewind(fence: ShardFence, chainId: number, to: LedgerBlock): Promise<{ from: bigint; logs: number }> {
    return withShardFence(this.pool, fence, async (client) => {
      const { rows } = await client.query(
        "SELECT indexed_height::text AS height FROM ledger_chains WHERE chain_id = $1 FOR UPDATE",
        [chainId],
      );
      const from = rows[0] ? BigInt(rows[0].height) : null;
      if (from === null || to.height > from)
        throw new TenorError(
          LEDGER_INDEX_ERRORS.LEDGER_REWIND_INVALID,
          `height = ${to.height}: must be at or below chain ${chainId}'s checkpoint (${from ?? "none"})`,
          { details: { field: "height", value: to.height.toString(), chainId } },
        );
      const logs =
        (await deleteTransfersAbove(client, chainId, to.height)) +
        (await deleteDomainRowsAbove(client, chainId, to.height));
      await client.query("DELETE FROM ledger_blocks WHERE chain_id = $1", [chainId]);
      await insertBlocks(client, chainId, [to]);
      await client.query(
        `UPDATE ledger_chains SET indexed_height = $2, indexed_hash = $3, indexed_block_time = $4,
           last_reorg_depth = $5, last_reorg_at = now(), ${WAIT_CLEARED}, updated_at = now() WHERE chain_id = $1`,
        [chainId, to.height.toString(), to.hash, to.time, Number(from - to.height)],
      );
      return { from, logs };
    });
  }

  /**
   * Records that the tail waits for its node (docs/ledger-index.md, "A node that is syncing or
   * behind"): the reason and the node's answer in words; `wait_since` keeps its time while the
   * reason stays the same. Nothing else changes: the checkpoint, blocks and rows stay. Fenced;
   * cleared by the next batch, idle step, rollback or rewind.
   */
  async recordWait(
    fence: ShardFence,
    chainId: number,
    expected: LedgerCursor,
    wait: { reason: NodeWaitReason; detail: string },
  ): Promise<void> {
    await withShardFence(this.pool, fence, async (client) => {
      await lockCursor(client, chainId, expected);
      await client.query(
        `UPDATE ledger_chains SET wait_since = CASE WHEN wait_reason IS DISTINCT FROM $2 THEN now() ELSE wait_since END,
           wait_reason = $2, wait_detail = $3, updated_at = now() WHERE chain_id = $1`,
        [chainId, wait.reason, wait.detail],
      );
    });
  }

  /**
   * Records the head the tail saw while it had nothing to ingest (health stays current) and
   * spawns the catch-up ranges of scope rows tracked since, up to the checkpoint. Fenced.
   */
  async recordIdle(
    fence: ShardFence,
    chainId: number,
    expected: LedgerCursor,
    head: LedgerHead,
    scopeIds: readonly string[],
    rangeBlocks: number,
  ): Promise<{ ranges: number }> {
    return withShardFence(this.pool, fence, async (client) => {
      await lockCursor(client, chainId, expected);
      const ranges = await spawnRanges(client, chainId, scopeIds, expected.height, rangeBlocks);
      await client.query(
        `UPDATE ledger_chains SET head_height = $2, head_block_time = $3, ${WAIT_CLEARED}, updated_at = now()
         WHERE chain_id = $1`,
        [chainId, head.height.toString(), head.time],
      );
      return { ranges };
    });
  }
}

/** Clears the tail's wait for its node: any write that moves or confirms the checkpoint ends it. */
const WAIT_CLEARED = "wait_reason = NULL, wait_detail = NULL, wait_since = NULL";

/** Locks the chain's checkpoint row and checks it is still `expected` (compare-and-set). */
async function lockCursor(client: PoolClient, chainId: number, expected: LedgerCursor): Promise<void> {
  const { rows } = await client.query(
    "SELECT indexed_height::text AS height, indexed_hash AS hash FROM ledger_chains WHERE chain_id = $1 FOR UPDATE",
    [chainId],
  );
  const now = rows[0];
  if (now && BigInt(now.height) === expected.height && now.hash === expected.hash) return;
  throw new TenorError(
    LEDGER_INDEX_ERRORS.LEDGER_CURSOR_MOVED,
    `chain ${chainId}: checkpoint is ${now ? `${now.height}/${now.hash}` : "(none)"}, the batch was read after ${expected.height}/${expected.hash}`,
    { retryable: true, details: { chainId } },
  );
}

async function insertBlocks(
  client: PoolClient,
  chainId: number,
  blocks: readonly LedgerBlock[],
): Promise<void> {
  await client.query(
    `INSERT INTO ledger_blocks (chain_id, height, hash, parent_hash, block_time)
     SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::timestamptz[])
     ON CONFLICT (chain_id, height) DO UPDATE SET hash = excluded.hash, parent_hash = excluded.parent_hash,
       block_time = excluded.block_time`,
    [
      chainId,
      blocks.map((b) => b.height.toString()),
      blocks.map((b) => b.hash),
      blocks.map((b) => b.parentHash),
      blocks.map((b) => b.time),
    ],
  );
}

/**
 * Marks the scope rows the batch read logs for (and rows removed at or below `below`, which need
 * none of its logs) as spawned and splits their history below the batch — [added height, min(`below`, removed height)] — into catch-up ranges of `rangeBlocks`.
 */
async function spawnRanges(
  client: PoolClient,
  chainId: number,
  scopeIds: readonly string[],
  below: bigint,
  rangeBlocks: number,
): Promise<number> {
  const { rowCount } = await client.query(
    `WITH spawned AS (
       UPDATE ledger_scope SET backfill_spawned = true
       WHERE NOT backfill_spawned AND chain_id = $4
         AND (id = ANY($1::bigint[]) OR removed_height <= $2::bigint)
       RETURNING chain_id, address, added_height, LEAST($2::bigint, COALESCE(removed_height, $2::bigint)) AS last
     )
     INSERT INTO ledger_ranges (chain_id, address, from_block, to_block, next_block)
     SELECT s.chain_id, s.address, f, LEAST(f + $3 - 1, s.last), f
     FROM spawned s, generate_series(s.added_height, s.last, $3::bigint) AS f`,
    [scopeIds, below.toString(), rangeBlocks, chainId],
  );
  return rowCount ?? 0;
}
