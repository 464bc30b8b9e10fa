import { LEDGER_INDEX_ERRORS } from "../errors/ledger-index-errors.js";
import { OWNERSHIP_ERRORS } from "../errors/ownership-errors.js";
import { TenorError } from "../errors/tenor-error.js";
import type { Logger } from "../observability/logger.js";
import type { ShardFence } from "../ownership/shard-fence.js";
import { type ChainReader, isBlockNotFound } from "./chain-reader.js";
import type { NodeWaitReason } from "./ledger-reads.js";
import { isUnverifiedLogs } from "./logs-check.js";
import type { LedgerBlock, LedgerCursor, PgLedgerIndex, TailBatch } from "./store/chain-checkpoint.js";
import type { LedgerLogs } from "./store/domain-logs.js";
import type { PgLedgerScope } from "./store/scope.js";

export interface LiveTailOptions {
  chainId: number;
  reader: ChainReader;
  index: PgLedgerIndex;
  scope: PgLedgerScope;
  /** Most blocks per batch. */
  batchBlocks: number;
  /** Blocks per catch-up range spawned for a newly tracked contract. */
  rangeBlocks: number;
  logger: Logger;
  /** Called after a rollback, with its depth in blocks (metrics). */
  onReorg?: (depth: number) => void;
  /**
   * A test seam: awaited after a batch was read and before it is committed. Fault tests hold a
   * batch here to freeze an owner mid-batch; production leaves it unset.
   */
  beforeCommit?: (batch: TailBatch) => Promise<void>;
}

/** A wait for the node: its reason and what the node answered, in words. */
export interface NodeWait {
  reason: NodeWaitReason;
  detail: string;
}

/**
 * What one step did: ingested blocks, rolled a reorganisation back, found nothing new, must read
 * again, or waits for a node that is syncing or behind (nothing rolled back).
 */
export type TailStep =
  | { kind: "advanced"; to: bigint; logs: number }
  | { kind: "rolled-back"; to: bigint; depth: number }
  | { kind: "idle"; at: bigint }
  | { kind: "retry"; reason: string }
  | ({ kind: "waiting" } & NodeWait);

/**
 * One step of a chain's live tail (docs/ledger-index.md, "Live tail"), under the chain shard's
 * fence: read the next blocks after the checkpoint; when the first one's parent is not the
 * checkpoint's hash, walk back to the common ancestor and roll back to it; otherwise read the
 * scope's logs (each contract's kind's events) for those blocks and commit blocks, logs and checkpoint together. A chain
 * without a checkpoint is anchored at its settled height; history below it is caught up in ranges.
 *
 * A node that is syncing or behind looks like a reorganisation (a lower head, another hash, a
 * missing block): the step then waits, recording why, and rolls nothing back. A head below the
 * checkpoint is always waited out; a differing hash is a reorganisation only while the node says
 * it does not sync.
 */
export async function tailStep(options: LiveTailOptions, fence: ShardFence): Promise<TailStep> {
  const cursor = await options.index.cursor(options.chainId);
  try {
    return await stepFrom(options, fence, cursor);
  } catch (error) {
    if (!cursor || !isBlockNotFound(error)) throw error;
    const detail = `the node has no block at a height below its head (${(error as Error).message.split("\n")[0]})`;
    return waitForNode(options, fence, cursor, { reason: "node-block-missing", detail });
  }
}

async function stepFrom(
  options: LiveTailOptions,
  fence: ShardFence,
  cursor: LedgerCursor | null,
): Promise<TailStep> {
  const { chainId, reader, index } = options;
  const head = await reader.head();
  if (!cursor) {
    const anchor = await reader.block(await reader.settledHeight(head));
    await index.anchor(fence, chainId, anchor, head);
    return { kind: "advanced", to: anchor.height, logs: 0 };
  }
  if (head.height < cursor.height) {
    const wait = (await syncingWait(reader)) ?? {
      reason: "node-behind" as const,
      detail: `the node's head ${head.height} is below the checkpoint ${cursor.height}`,
    };
    return waitForNode(options, fence, cursor, wait);
  }
  if (head.height === cursor.height) {
    if (head.hash === cursor.hash) {
      const scope = await options.scope.activeFrom(chainId, cursor.height + 1n);
      const ids = scope.map((row) => row.id);
      await index.recordIdle(fence, chainId, cursor, head, ids, options.rangeBlocks);
      return { kind: "idle", at: cursor.height };
    }
    return rollBackUnlessSyncing(options, fence, cursor);
  }
  const to = min(head.height, cursor.height + BigInt(options.batchBlocks));
  const blocks = await reader.blocks(cursor.height + 1n, to);
  if ((blocks[0] as LedgerBlock).parentHash !== cursor.hash)
    return rollBackUnlessSyncing(options, fence, cursor);
  if (!linked(blocks)) return { kind: "retry", reason: "the chain changed while its blocks were read" };
  const scope = await options.scope.activeFrom(chainId, cursor.height + 1n);
  let logs: LedgerLogs;
  try {
    logs = await reader.checkedLogs(scope, blocks);
  } catch (error) {
    // A short answer, or logs of another branch (the chain moved): nothing committed, read again.
    if (!isUnverifiedLogs(error)) throw error;
    options.logger.warn("ledger logs answer refused: the batch is read again", {
      chainId,
      block: error.details?.block,
      error: error.message,
    });
    return { kind: "retry", reason: error.message };
  }
  const batch: TailBatch = {
    expected: cursor,
    blocks,
    logs,
    scopeIds: scope.map((row) => row.id),
    head: { height: head.height, time: head.time },
    rangeBlocks: options.rangeBlocks,
    pruneBelow: min(await reader.settledHeight(head), cursor.height),
  };
  await options.beforeCommit?.(batch);
  const committed = await index.commitBatch(fence, chainId, batch);
  return { kind: "advanced", to, logs: committed.logs };
}

/** The wait a syncing node calls for, or null when `eth_syncing` says it does not sync. */
async function syncingWait(reader: ChainReader): Promise<NodeWait | null> {
  const syncing = await reader.syncing();
  if (!syncing) return null;
  return {
    reason: "node-syncing",
    detail: `the node is syncing (eth_syncing: block ${syncing.currentBlock} of ${syncing.highestBlock})`,
  };
}

/** Records the wait on the checkpoint's row (health) and reports it; the index is left as it is. */
async function waitForNode(
  options: LiveTailOptions,
  fence: ShardFence,
  cursor: LedgerCursor,
  wait: NodeWait,
): Promise<TailStep> {
  await options.index.recordWait(fence, options.chainId, cursor, wait);
  return { kind: "waiting", ...wait };
}

/** A hash the checkpoint does not match: a reorganisation, unless the node says it is syncing. */
async function rollBackUnlessSyncing(
  options: LiveTailOptions,
  fence: ShardFence,
  cursor: LedgerCursor,
): Promise<TailStep> {
  const wait = await syncingWait(options.reader);
  if (wait) return waitForNode(options, fence, cursor, wait);
  return rollBack(options, fence, cursor);
}

/** Walks back from the checkpoint to the highest block whose stored hash the node still has. */
async function rollBack(
  options: LiveTailOptions,
  fence: ShardFence,
  cursor: LedgerCursor,
): Promise<TailStep> {
  const { chainId, reader, index } = options;
  const lowest = (await index.lowestBlock(chainId)) ?? cursor.height;
  for (let h = cursor.height; h >= lowest; h--) {
    const stored = await index.blockHash(chainId, h);
    const node = await reader.block(h);
    if (stored !== null && stored === node.hash) {
      const { depth, logs } = await index.rollback(fence, chainId, cursor, node);
      options.logger.warn("ledger reorganisation rolled back", {
        chainId,
        ancestor: h.toString(),
        depth,
        logs,
      });
      options.onReorg?.(depth);
      return { kind: "rolled-back", to: h, depth };
    }
  }
  throw new TenorError(
    LEDGER_INDEX_ERRORS.LEDGER_REORG_TOO_DEEP,
    `chain ${chainId}: no block from ${lowest} to ${cursor.height} is still on the node's chain`,
    { details: { chainId, lowest: lowest.toString(), checkpoint: cursor.height.toString() } },
  );
}

function linked(blocks: readonly LedgerBlock[]): boolean {
  for (let i = 1; i < blocks.length; i++) {
    if ((blocks[i] as LedgerBlock).parentHash !== (blocks[i - 1] as LedgerBlock).hash) return false;
  }
  return true;
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);

/** True for the refusal of a write made under a superseded owner epoch. */
export function isStaleEpoch(error: unknown): boolean {
  return error instanceof TenorError && error.code === OWNERSHIP_ERRORS.SHARD_EPOCH_STALE;
}
