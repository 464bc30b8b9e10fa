import type { Pool } from "pg";
import { pgRetentionPolicy, type RetentionPolicy } from "./retention-policy.js";

/**
 * Finished keyed commands (`done`, `failed`) completed before the cutoff (docs/keyed.md). A queued
 * or running command is never deleted: it is still someone's work. Deleting a finished one
 * releases its command id, as retention releases an execution's idempotency key.
 */
export function keyedCommandRetentionPolicy(pool: Pool): RetentionPolicy {
  return pgRetentionPolicy(pool, {
    name: "keyed-commands",
    async deleteBatch(client, cutoff, limit) {
      const { rows } = await client.query<{ n: number }>(
        `WITH doomed AS (
           SELECT id FROM keyed_commands
            WHERE status IN ('done', 'failed') AND completed_at < $1
            ORDER BY completed_at LIMIT $2
            FOR UPDATE SKIP LOCKED
         ), gone AS (DELETE FROM keyed_commands k USING doomed WHERE k.id = doomed.id RETURNING 1)
         SELECT count(*)::int AS n FROM gone`,
        [cutoff, limit],
      );
      const n = rows[0]?.n ?? 0;
      return { deleted: { keyed_commands: n }, primary: n };
    },
    async remaining(db, cutoff) {
      const { rows } = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM keyed_commands WHERE status IN ('done', 'failed') AND completed_at < $1",
        [cutoff],
      );
      return rows[0]?.n ?? 0;
    },
  });
}

/**
 * Rows of replicas not seen since before the cutoff (docs/ownership.md): a replica that exits
 * cleanly deletes its own row, one that crashed leaves it. A live replica's heartbeat keeps
 * `last_seen` recent, so it is never eligible.
 */
export function replicaRetentionPolicy(pool: Pool): RetentionPolicy {
  return pgRetentionPolicy(pool, {
    name: "replicas",
    async deleteBatch(client, cutoff, limit) {
      const { rows } = await client.query<{ n: number }>(
        `WITH doomed AS (
           SELECT id FROM replicas WHERE last_seen < $1
            ORDER BY last_seen LIMIT $2
            FOR UPDATE SKIP LOCKED
         ), gone AS (DELETE FROM replicas r USING doomed WHERE r.id = doomed.id RETURNING 1)
         SELECT count(*)::int AS n FROM gone`,
        [cutoff, limit],
      );
      const n = rows[0]?.n ?? 0;
      return { deleted: { replicas: n }, primary: n };
    },
    async remaining(db, cutoff) {
      const { rows } = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM replicas WHERE last_seen < $1",
        [cutoff],
      );
      return rows[0]?.n ?? 0;
    },
  });
}
