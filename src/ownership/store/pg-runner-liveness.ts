import type pg from "pg";

/**
 * Advisory-lock namespace of runner liveness (`classid` in pg_locks); shard ownership uses
 * 746001 (runner) and 746002 (indexer): docs/ownership.md.
 */
export const RUNNER_LIVENESS_NAMESPACE = 746003;

/**
 * Takes runner `key`'s liveness lock on `client`'s session, without waiting. Session-level: it
 * lives exactly as long as the session (a killed process's session ends, and the lock with it),
 * so it must be a reserved connection, never a pooled one or one behind a transaction-mode pooler.
 * @returns false when another session holds it.
 */
export async function tryLockRunnerKey(client: pg.ClientBase, key: number): Promise<boolean> {
  const { rows } = await client.query<{ locked: boolean }>(
    "SELECT pg_try_advisory_lock($1::int, $2::int) AS locked",
    [RUNNER_LIVENESS_NAMESPACE, key],
  );
  return rows[0]?.locked === true;
}

/** Releases runner `key`'s liveness lock held by `client`'s session (a graceful stop). */
export async function unlockRunnerKey(client: pg.ClientBase, key: number): Promise<void> {
  await client.query("SELECT pg_advisory_unlock($1::int, $2::int)", [RUNNER_LIVENESS_NAMESPACE, key]);
}

/**
 * The runner keys whose liveness lock some session of this database holds now: the runners
 * alive as far as PostgreSQL knows. `key` must be positive (objid is unsigned in pg_locks).
 */
export async function heldRunnerKeys(client: pg.ClientBase): Promise<Set<number>> {
  const { rows } = await client.query<{ key: string }>(
    `SELECT objid::text AS key FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND objsubid = 2
        AND classid = $1::int::oid
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [RUNNER_LIVENESS_NAMESPACE],
  );
  return new Set(rows.map((r) => Number(r.key)));
}
