import type { Pool, PoolClient } from "pg";
import { OWNERSHIP_ERRORS } from "../../errors/ownership-errors.js";
import { TenorError } from "../../errors/tenor-error.js";
import { withTransaction } from "../../store/with-transaction.js";
import {
  boundTransaction,
  incrementOwnerEpoch,
  LOCK_NOT_AVAILABLE,
  lockOwnerEpochForShare,
  type Queryable,
} from "./pg-shard-ownership.js";

/** Ownership domains: each role that owns shards has its own shard space (src/ownership/shard-map.ts). */
export const SHARD_DOMAINS = ["runner", "indexer"] as const;
export type ShardDomain = (typeof SHARD_DOMAINS)[number];

/** What a shard-owned write carries: the shard and the epoch under which its owner acquired it. */
export interface ShardFence {
  domain: ShardDomain;
  shard: number;
  /** From `shard_owners.epoch`, incremented on every acquisition. A bigint in text form. */
  epoch: string;
}

/**
 * How long a fenced transaction may sit idle (its client silent between statements) before the
 * server ends its session, in ms. A fenced write is a few statements of database work; an owner
 * that freezes inside one (SIGSTOP, a VM pause) must not hold its shard's epoch row FOR SHARE,
 * and so block every takeover, for longer than this
 * (docs/ownership.md, "A frozen owner inside a fenced write").
 */
export const FENCED_IDLE_TIMEOUT_MS = 2_000;

/**
 * Records a new acquisition of `shard` by `ownerId` and returns its epoch (previous + 1, or 1).
 * Runs on the owner's reserved connection right after `pg_try_advisory_lock` succeeded, in a
 * transaction of its own whose `lock_timeout` is `lockTimeoutMs`: the row may still be held FOR
 * SHARE by a fenced write of the previous owner, and waiting for it must cost this one shard,
 * not the deadline of the whole refresh.
 *
 * @throws TenorError `SHARD_EPOCH_BUSY` (retryable) when the row stayed locked for `lockTimeoutMs`.
 */
export async function bumpOwnerEpoch(
  client: Queryable,
  domain: ShardDomain,
  shard: number,
  ownerId: string,
  lockTimeoutMs: number,
): Promise<string> {
  try {
    return await incrementOwnerEpoch(client, { domain, shard, ownerId }, lockTimeoutMs);
  } catch (error) {
    if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw error;
    throw new TenorError(
      OWNERSHIP_ERRORS.SHARD_EPOCH_BUSY,
      `shard ${domain}/${shard}: its epoch row stayed locked for ${lockTimeoutMs} ms (a fenced write of its previous owner)`,
      { retryable: true, details: { domain, shard, lockTimeoutMs } },
    );
  }
}

/**
 * Checks, inside the caller's transaction, that `fence` is still the shard's current epoch, and
 * holds the `shard_owners` row `FOR SHARE` until that transaction ends. A new owner's epoch
 * increment waits for the share lock, so every write made under the old epoch commits before the
 * handover or is refused after it: PostgreSQL orders them, not the clocks of the replicas.
 *
 * @throws TenorError `SHARD_EPOCH_STALE` (not retryable: the shard belongs to someone else now).
 */
export async function assertOwnerEpoch(client: Queryable, fence: ShardFence): Promise<void> {
  const current = await lockOwnerEpochForShare(client, fence.domain, fence.shard);
  if (current?.epoch === fence.epoch) return;
  throw new TenorError(
    OWNERSHIP_ERRORS.SHARD_EPOCH_STALE,
    `shard ${fence.domain}/${fence.shard} is at epoch ${current?.epoch ?? "(never owned)"}, ` +
      `this write carries epoch ${fence.epoch}: the shard was handed over and the write is refused`,
    { details: { ...fence, currentEpoch: current?.epoch ?? null, currentOwner: current?.ownerId ?? null } },
  );
}

/**
 * Runs `write` in a transaction that first asserts the owner epoch: the form every shard-owned
 * write takes. Commits when `write` resolves, rolls back when it or the assertion throws. The
 * transaction cannot outlive a silent owner: the server ends it after FENCED_IDLE_TIMEOUT_MS idle
 * (`idle_in_transaction_session_timeout`), and it waits for no lock longer than that
 * (`lock_timeout`). `write` must therefore be database work only, never a call to the outside.
 */
export async function withShardFence<T>(
  pool: Pool,
  fence: ShardFence,
  write: (client: PoolClient) => Promise<T>,
): Promise<T> {
  return withTransaction(pool, async (client) => {
    // The server ends this transaction's session if its client goes silent inside it, so a
    // frozen owner cannot hold the epoch row past FENCED_IDLE_TIMEOUT_MS.
    await boundTransaction(client, FENCED_IDLE_TIMEOUT_MS);
    await assertOwnerEpoch(client, fence);
    return write(client);
  });
}
