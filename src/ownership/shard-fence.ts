/**
 * Shard fencing as other features see it (docs/ownership.md, "Owner epochs"): the fence a shard-owned
 * write carries and the transaction that checks it. Features above ownership (the Ledger Index)
 * import this module, never `./store/`, whose statements stay ownership's own.
 */
export { SHARD_DOMAINS, type ShardDomain, type ShardFence, withShardFence } from "./store/shard-fence.js";
