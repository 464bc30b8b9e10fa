import { LEDGER_INDEX_ERRORS } from "../errors/ledger-index-errors.js";
import { TenorError } from "../errors/tenor-error.js";
import type { Logger } from "../observability/logger.js";
import { shardOf } from "../ownership/shard-map.js";
import type { ChainReader } from "./chain-reader.js";
import { chainShardKey } from "./ledger-indexer.js";
import type { PgLedgerIndex } from "./store/chain-checkpoint.js";

export interface RewindRequest {
  chainId: number;
  /** The height to rewind to: a block the node's current chain shares with what was indexed. */
  height: bigint;
  /** `durable.sharding.shardCount`: locates the chain's indexer shard. */
  shardCount: number;
}

/**
 * Rewinds a chain's index to `height` (docs/ledger-index.md, "Rewinding a chain"): the way out of
 * a reorganisation deeper than the stored blocks (LEDGER_REORG_TOO_DEEP). Reads the node's block
 * at that height and commits the rewind under the chain shard's current owner epoch, so a
 * handover in between refuses it rather than interleaving with a new owner; the running tail
 * re-ingests from there on its next step.
 *
 * @throws TenorError LEDGER_REWIND_INVALID (no owner or checkpoint yet, or a height above the
 *   checkpoint), SHARD_EPOCH_STALE (the shard changed owner meanwhile: run it again).
 */
export async function rewindChain(
  index: PgLedgerIndex,
  reader: ChainReader,
  request: RewindRequest,
  logger: Logger,
): Promise<{ from: bigint; to: bigint; logs: number }> {
  const shard = shardOf(chainShardKey(request.chainId), request.shardCount);
  const fence = await index.ownerFence(shard);
  if (!fence)
    throw new TenorError(
      LEDGER_INDEX_ERRORS.LEDGER_REWIND_INVALID,
      `chain ${request.chainId}: its indexer shard ${shard} was never owned, so there is nothing to rewind`,
      { details: { chainId: request.chainId, shard } },
    );
  const cursor = await index.cursor(request.chainId);
  if (request.height < 0n || !cursor || request.height > cursor.height)
    throw new TenorError(
      LEDGER_INDEX_ERRORS.LEDGER_REWIND_INVALID,
      `height = ${request.height}: must be ≥ 0 and at or below chain ${request.chainId}'s checkpoint (${cursor?.height ?? "none"})`,
      { details: { field: "height", value: request.height.toString(), chainId: request.chainId } },
    );
  const block = await reader.block(request.height);
  const { from, logs } = await index.rewind(fence, request.chainId, block);
  logger.warn("ledger index rewound", {
    chainId: request.chainId,
    from: from.toString(),
    to: request.height.toString(),
    logs,
    epoch: fence.epoch,
  });
  return { from, to: request.height, logs };
}
