import type { Pool, PoolClient } from "pg";
import { withTransaction } from "../with-transaction.js";

/** What one bounded batch deleted. */
export interface RetentionBatch {
  /** Rows (or messages) deleted per table or store, children included: `{ executions: 100, journal_entries: 812 }`. */
  deleted: Record<string, number>;
  /**
   * Rows of the policy's primary table deleted by this batch. A batch that deleted fewer than
   * its limit found nothing more it could take (the rest is newer, or locked by someone else).
   */
  primary: number;
}

/**
 * One kind of data that expires (docs/schedules.md, "Retention"). The pass runner calls
 * `deleteBatch` until a batch comes back short, then `remaining`; it never deletes in one unbounded
 * transaction.
 *
 * Adding a policy is adding an object, not a mechanism: webhook audit retention
 * (src/store/retention/webhook-retention.ts) is one more {@link pgRetentionPolicy}.
 */
export interface RetentionPolicy {
  readonly name: string;
  /** Deletes at most `limit` eligible primary rows older than `cutoff`, with their children. */
  deleteBatch(cutoff: Date, limit: number): Promise<RetentionBatch>;
  /** Eligible rows older than `cutoff` still present (including any skipped because locked). */
  remaining(cutoff: Date): Promise<number>;
}

/** A PostgreSQL policy: its batch runs in a transaction of its own; `remaining` on the pool. */
export interface PgRetentionPolicyDefinition {
  name: string;
  /** Runs inside `BEGIN … COMMIT`; must select its rows `FOR UPDATE SKIP LOCKED` with `LIMIT limit`. */
  deleteBatch(client: PoolClient, cutoff: Date, limit: number): Promise<RetentionBatch>;
  remaining(pool: Pool, cutoff: Date): Promise<number>;
}

/** Wraps a PostgreSQL policy so each batch is one short transaction, rolled back when it throws. */
export function pgRetentionPolicy(pool: Pool, definition: PgRetentionPolicyDefinition): RetentionPolicy {
  return {
    name: definition.name,
    deleteBatch: (cutoff, limit) =>
      withTransaction(pool, (client) => definition.deleteBatch(client, cutoff, limit)),
    remaining: (cutoff) => definition.remaining(pool, cutoff),
  };
}
