import type { Pool, PoolClient } from "pg";

/**
 * The statements of shard ownership (src/ownership, docs/ownership.md): session advisory locks
 * taken on an owner's reserved connection, the `replicas` heartbeat that counts live replicas, the
 * `shard_owners` epochs that fence shard-owned writes, and the shard count every role agrees on.
 * Decisions (what to acquire, when an epoch is stale) stay in src/ownership; these only read and
 * write.
 */

/** What a replica says about itself at each heartbeat (src/ownership/replica-directory.ts). */
export interface ReplicaReport {
  /** The workflows it serves, as `name@version` (a runner's registry; empty for an indexer). */
  workflows: readonly string[];
  /** Execution turns in progress now; null for a replica that runs none (an indexer). */
  busy: number | null;
  /** How many turns it runs at once (`durable.runnerConcurrency`); null for an indexer. */
  capacity: number | null;
}

/** A connection statements run on: a `pg.Client` (the reserved session) or a pooled client. */
export type Queryable = Pick<PoolClient, "query">;

/** `pg_backend_pid()` of the session: how another connection can end it. */
export async function sessionBackendPid(client: Queryable): Promise<number> {
  const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  return rows[0]?.pid as number;
}

/**
 * `client_connection_check_interval` of the session, in milliseconds: the reserved connection
 * asks for 1000 in its startup options, so any other value means the options never reached
 * PostgreSQL (a pooler dropped them).
 */
export async function sessionConnectionCheckIntervalMs(client: Queryable): Promise<number> {
  const { rows } = await client.query<{ ms: number }>(
    "SELECT setting::int AS ms FROM pg_settings WHERE name = 'client_connection_check_interval'",
  );
  return rows[0]?.ms ?? 0;
}

/** Ends another replica's reserved session (only one with this application name). */
export async function terminateSession(pool: Pool, pid: number, applicationName: string): Promise<void> {
  await pool.query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND application_name = $2",
    [pid, applicationName],
  );
}

/** Takes the session advisory lock of `(namespace, shard)` if free; true when taken. */
export async function tryLockShard(client: Queryable, namespace: number, shard: number): Promise<boolean> {
  const { rows } = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1, $2) AS ok", [
    namespace,
    shard,
  ]);
  return rows[0]?.ok === true;
}

export async function unlockShard(client: Queryable, namespace: number, shard: number): Promise<void> {
  await client.query("SELECT pg_advisory_unlock($1, $2)", [namespace, shard]);
}

export async function unlockAllShards(client: Queryable): Promise<void> {
  await client.query("SELECT pg_advisory_unlock_all()");
}

/** The shards of `namespace` whose locks this session holds. */
export async function shardsLockedBySession(client: Queryable, namespace: number): Promise<Set<number>> {
  const { rows } = await client.query<{ shard: number }>(
    `SELECT objid::int AS shard FROM pg_locks
      WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND classid = $1::int::oid
        AND objsubid = 2 AND granted`,
    [namespace],
  );
  return new Set(rows.map((r) => r.shard));
}

/** The shards of `namespace` locked by any session of this database. */
export async function shardsLockedByAnyone(client: Queryable, namespace: number): Promise<Set<number>> {
  const { rows } = await client.query<{ shard: number }>(
    `SELECT objid::int AS shard FROM pg_locks
      WHERE locktype = 'advisory' AND classid = $1::int::oid AND objsubid = 2 AND granted
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [namespace],
  );
  return new Set(rows.map((r) => r.shard));
}

/**
 * Writes this replica's heartbeat (tied to its session's backend) and returns the live replicas
 * of the domain, itself included: those seen within `livenessWindowMs` whose backend still runs.
 */
export async function heartbeatReplica(
  client: Queryable,
  replica: { id: string; domain: string; host: string; pid: number; report: ReplicaReport },
  livenessWindowMs: number,
): Promise<number> {
  const { workflows, busy, capacity } = replica.report;
  const { rows } = await client.query<{ live: number }>(
    `WITH beat AS (
       INSERT INTO replicas (id, domain, host, pid, backend_pid, backend_start, started_at, last_seen,
                             workflows, busy, capacity)
       SELECT $1, $2, $3, $4, a.pid, a.backend_start, now(), now(), $6::text[], $7, $8
         FROM pg_stat_activity a WHERE a.pid = pg_backend_pid()
       ON CONFLICT (id) DO UPDATE
         SET last_seen = now(), backend_pid = excluded.backend_pid, backend_start = excluded.backend_start,
             workflows = excluded.workflows, busy = excluded.busy, capacity = excluded.capacity
       RETURNING 1
     )
     SELECT 1 + count(*)::int AS live FROM replicas r
      WHERE r.domain = $2 AND r.id <> $1
        AND r.last_seen > now() - make_interval(secs => $5::float / 1000)
        AND EXISTS (SELECT 1 FROM pg_stat_activity a
                     WHERE a.pid = r.backend_pid AND a.backend_start IS NOT DISTINCT FROM r.backend_start)`,
    [replica.id, replica.domain, replica.host, replica.pid, livenessWindowMs, workflows, busy, capacity],
  );
  return rows[0]?.live ?? 1;
}

export async function removeReplica(client: Queryable, replicaId: string): Promise<void> {
  await client.query("DELETE FROM replicas WHERE id = $1", [replicaId]);
}

/** SQLSTATE of a `lock_timeout` that fired. */
export const LOCK_NOT_AVAILABLE = "55P03";

/**
 * Records a new acquisition of the shard by `ownerId` and returns its epoch (previous + 1, or 1),
 * in a transaction of its own whose `lock_timeout` is `lockTimeoutMs`. Rejects with SQLSTATE
 * LOCK_NOT_AVAILABLE when the epoch row stayed locked that long.
 */
export async function incrementOwnerEpoch(
  client: Queryable,
  shard: { domain: string; shard: number; ownerId: string },
  lockTimeoutMs: number,
): Promise<string> {
  await client.query("BEGIN");
  try {
    await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
    const { rows } = await client.query<{ epoch: string }>(
      `INSERT INTO shard_owners (domain, shard, owner_id, epoch, acquired_at) VALUES ($1, $2, $3, 1, now())
       ON CONFLICT (domain, shard) DO UPDATE
         SET owner_id = excluded.owner_id, epoch = shard_owners.epoch + 1, acquired_at = now()
       RETURNING epoch::text`,
      [shard.domain, shard.shard, shard.ownerId],
    );
    await client.query("COMMIT");
    return rows[0]?.epoch as string;
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  }
}

/**
 * The shard's current epoch and owner, holding its row `FOR SHARE` until the caller's transaction
 * ends; undefined when the shard was never owned.
 */
export async function lockOwnerEpochForShare(
  client: Queryable,
  domain: string,
  shard: number,
): Promise<{ epoch: string; ownerId: string } | undefined> {
  const { rows } = await client.query<{ epoch: string; owner_id: string }>(
    "SELECT epoch::text, owner_id FROM shard_owners WHERE domain = $1 AND shard = $2 FOR SHARE",
    [domain, shard],
  );
  const row = rows[0];
  return row ? { epoch: row.epoch, ownerId: row.owner_id } : undefined;
}

/**
 * Bounds the caller's transaction: the server ends its session after `ms` idle inside it, and it
 * waits for no lock longer than that. Literal values in one round trip.
 */
export async function boundTransaction(client: Queryable, ms: number): Promise<void> {
  const bound = Math.max(1, Math.floor(ms));
  await client.query(
    `SET LOCAL idle_in_transaction_session_timeout = ${bound}; SET LOCAL lock_timeout = ${bound}`,
  );
}

/**
 * Records `value` under `key` in `engine_settings` unless a value is recorded already, and returns
 * the recorded one (the first writer's).
 */
export async function recordSettingOnce(pool: Pool, key: string, value: number): Promise<number> {
  const { rows } = await pool.query<{ value: unknown }>(
    `WITH recorded AS (
       INSERT INTO engine_settings (key, value) VALUES ($1, to_jsonb($2::int))
       ON CONFLICT (key) DO NOTHING
       RETURNING value
     )
     SELECT value FROM recorded
     UNION ALL
     SELECT value FROM engine_settings WHERE key = $1
     LIMIT 1`,
    [key, value],
  );
  if (rows.length > 0) return Number(rows[0]?.value);
  // A concurrent first writer: our INSERT waited on its uncommitted row and then did nothing, but
  // this statement's SELECT still reads the snapshot taken before that row committed, so it saw no
  // row either. A second statement takes a new snapshot and reads what the other writer recorded.
  const again = await pool.query<{ value: unknown }>("SELECT value FROM engine_settings WHERE key = $1", [
    key,
  ]);
  if (again.rows.length === 0) throw new Error(`engine setting ${key} was neither recorded nor found`);
  return Number(again.rows[0]?.value);
}
