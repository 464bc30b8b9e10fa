import type { Pool, PoolClient } from "pg";
import { TenorError } from "../errors/tenor-error.js";
import { withTransaction } from "../store/with-transaction.js";
import { OWNERSHIP_ERRORS } from "./ownership-errors.js";
import type { ShardDomain } from "./shard-map.js";

/** What a shard-owned write carries: the shard and the epoch under which its owner acquired it. */
export interface ShardFence {
  domain: ShardDomain;
  shard: number;
  /** From `shard_owners.epoch`, incremented on every acquisition. A bigint in text form. */
  epoch: string;
}

/** A queryable connection: a `pg.Client` or a `pg.PoolClient`. */
type Queryable = Pick<PoolClient, "query">;

/**
 * Records a new acquisition of `shard` by `ownerId` and returns its epoch (previous + 1, or 1).
 * Runs on the owner's reserved connection right after `pg_try_advisory_lock` succeeded.
 */
export async function bumpOwnerEpoch(
  client: Queryable,
  domain: ShardDomain,
  shard: number,
  ownerId: string,
): Promise<string> {
  const { rows } = await client.query<{ epoch: string }>(
    `INSERT INTO shard_owners (domain, shard, owner_id, epoch, acquired_at) VALUES ($1, $2, $3, 1, now())
     ON CONFLICT (domain, shard) DO UPDATE
       SET owner_id = excluded.owner_id, epoch = shard_owners.epoch + 1, acquired_at = now()
     RETURNING epoch::text`,
    [domain, shard, ownerId],
  );
  return rows[0]?.epoch as string;
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
  const { rows } = await client.query<{ epoch: string; owner_id: string }>(
    "SELECT epoch::text, owner_id FROM shard_owners WHERE domain = $1 AND shard = $2 FOR SHARE",
    [fence.domain, fence.shard],
  );
  const current = rows[0];
  if (current?.epoch === fence.epoch) return;
  throw new TenorError(
    OWNERSHIP_ERRORS.SHARD_EPOCH_STALE,
    `shard ${fence.domain}/${fence.shard} is at epoch ${current?.epoch ?? "(never owned)"}, ` +
      `this write carries epoch ${fence.epoch}: the shard was handed over and the write is refused`,
    { details: { ...fence, currentEpoch: current?.epoch ?? null, currentOwner: current?.owner_id ?? null } },
  );
}

/**
 * Runs `write` in a transaction that first asserts the owner epoch: the form every shard-owned
 * write takes. Commits when `write` resolves, rolls back when it or the assertion throws.
 */
export async function withShardFence<T>(
  pool: Pool,
  fence: ShardFence,
  write: (client: PoolClient) => Promise<T>,
): Promise<T> {
  return withTransaction(pool, async (client) => {
    await assertOwnerEpoch(client, fence);
    return write(client);
  });
}
