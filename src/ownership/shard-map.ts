import type { ShardDomain } from "./store/shard-fence.js";

/**
 * Mapping work to shards (docs/ownership.md, "Shards"): `hash(key) mod durable.sharding.shardCount`.
 *
 * The hash is 32-bit FNV-1a over the key's UTF-8 bytes: stable across processes, releases and
 * platforms (never `Math.random` or a per-process seed), cheap, and spread well enough for
 * shard counts in the tens to thousands. Changing it moves every key, exactly like changing the
 * shard count, so it is frozen.
 */

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const encoder = new TextEncoder();

/** 32-bit FNV-1a of `text`'s UTF-8 bytes, as an unsigned integer. */
export function fnv1a32(text: string): number {
  let hash = FNV_OFFSET_BASIS;
  for (const byte of encoder.encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME);
  }
  return hash >>> 0;
}

/**
 * The shard that owns `key`, in `[0, shardCount)`.
 *
 * @throws RangeError when `shardCount` is not a positive integer.
 */
export function shardOf(key: string, shardCount: number): number {
  if (!Number.isInteger(shardCount) || shardCount < 1)
    throw new RangeError(`shardCount must be a positive integer, got ${shardCount}`);
  return fnv1a32(key) % shardCount;
}

export { SHARD_DOMAINS, type ShardDomain } from "./store/shard-fence.js";

/**
 * First key of the two-int advisory lock `pg_try_advisory_lock(namespace, shard)` per domain.
 * Fixed numbers, so an operator can find the locks in `pg_locks` (`classid` = namespace,
 * `objid` = shard, `objsubid` = 2) and no other lock user of the database collides with them.
 */
export const SHARD_LOCK_NAMESPACE: Readonly<Record<ShardDomain, number>> = Object.freeze({
  runner: 746_001,
  indexer: 746_002,
});

/**
 * Rendezvous (highest-random-weight) preference of `replicaId` for `shard`. Each replica keeps the
 * shards it prefers most and gives up those it prefers least, so a rebalance moves few shards and
 * replicas do not all reach for the same free shard first.
 */
export function shardPreference(replicaId: string, shard: number): number {
  return fnv1a32(`${replicaId}#${shard}`);
}
