/** Stable error codes of shard ownership; never reworded once shipped. */
export const OWNERSHIP_ERRORS = {
  /** This process's `durable.sharding.shardCount` differs from the one recorded in the database. */
  SHARD_COUNT_MISMATCH: "SHARD_COUNT_MISMATCH",
  /** A shard-owned write carried an owner epoch that is no longer current: the shard moved. */
  SHARD_EPOCH_STALE: "SHARD_EPOCH_STALE",
  /**
   * A new owner's epoch bump found the shard's epoch row still locked by a fenced write of the
   * previous owner; that one shard is left for the next refresh.
   */
  SHARD_EPOCH_BUSY: "SHARD_EPOCH_BUSY",
  /** A lock operation on the reserved connection did not finish within its deadline. */
  SHARD_LOCK_DEADLINE: "SHARD_LOCK_DEADLINE",
  /**
   * A reserved session (shard ownership, runner liveness) does not reach PostgreSQL as a session of
   * its own: a pooler refused or dropped its startup options. Behind a transaction-mode PgBouncer
   * its advisory locks would be shared with other clients. Not retryable: a configuration fix.
   */
  RESERVED_SESSION_POOLED: "RESERVED_SESSION_POOLED",
  /** The abort reason of work under a shard this process released (lost or handed over). */
  SHARD_RELEASED: "SHARD_RELEASED",
} as const;

export type OwnershipErrorCode = (typeof OWNERSHIP_ERRORS)[keyof typeof OWNERSHIP_ERRORS];

declare module "./error-code-registry.js" {
  interface ErrorCodeRegistry {
    ownership: OwnershipErrorCode;
  }
}
