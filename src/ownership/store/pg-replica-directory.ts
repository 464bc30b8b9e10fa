import type { Pool } from "pg";
import type { ReplicaDirectory, ReplicaView, ShardCoverage } from "../replica-directory.js";
import { SHARD_LOCK_NAMESPACE, type ShardDomain } from "../shard-map.js";
import { shardsLockedByAnyone } from "./pg-shard-ownership.js";

/** How long a replica that stopped heartbeating is still listed (as not live). */
const LOST_REPLICAS_LISTED_MS = 3_600_000;

interface ReplicaRow {
  id: string;
  domain: ShardDomain;
  host: string;
  pid: number;
  started_at: Date;
  last_seen: Date;
  age_ms: number;
  live: boolean;
  shards: number[];
  workflows: string[] | null;
  busy: number | null;
  capacity: number | null;
}

/**
 * The `replicas` heartbeats joined with the sessions and advisory locks PostgreSQL holds now
 * (src/ownership/replica-directory.ts). Liveness is decided as the shard owners decide it when they
 * count their peers: a heartbeat inside `livenessWindowMs` whose backend still runs.
 */
export class PgReplicaDirectory implements ReplicaDirectory {
  constructor(
    private readonly pool: Pool,
    private readonly livenessWindowMs: number,
  ) {}

  async list(): Promise<ReplicaView[]> {
    const { rows } = await this.pool.query<ReplicaRow>(
      `WITH seen AS (
         SELECT r.*, a.pid IS NOT NULL AS session_open,
                r.last_seen > now() - make_interval(secs => $1::float / 1000) AS recent
           FROM replicas r
           LEFT JOIN pg_stat_activity a
             ON a.pid = r.backend_pid AND a.backend_start IS NOT DISTINCT FROM r.backend_start
          WHERE r.last_seen > now() - make_interval(secs => $2::float / 1000)
       )
       SELECT s.id, s.domain, s.host, s.pid, s.started_at, s.last_seen, s.workflows, s.busy, s.capacity,
              (extract(epoch FROM now() - s.last_seen) * 1000)::float8 AS age_ms,
              (s.recent AND s.session_open) AS live,
              CASE WHEN s.recent AND s.session_open THEN
                coalesce((SELECT array_agg(l.objid::int ORDER BY l.objid::int) FROM pg_locks l
                           WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                             AND l.pid = s.backend_pid
                             AND l.classid = (CASE s.domain WHEN 'runner' THEN $3 ELSE $4 END)::int::oid),
                         '{}')
              ELSE '{}' END AS shards
         FROM seen s
        ORDER BY s.domain = 'runner' DESC, s.domain, (s.recent AND s.session_open) DESC, s.started_at, s.id`,
      [
        this.livenessWindowMs,
        LOST_REPLICAS_LISTED_MS,
        SHARD_LOCK_NAMESPACE.runner,
        SHARD_LOCK_NAMESPACE.indexer,
      ],
    );
    return rows.map((row) => ({
      id: row.id,
      domain: row.domain,
      host: row.host,
      pid: row.pid,
      startedAt: row.started_at,
      lastHeartbeatAt: row.last_seen,
      heartbeatAgeMs: Math.max(0, Math.round(row.age_ms)),
      live: row.live,
      shards: row.shards,
      workflows: row.workflows ?? [],
      busy: row.busy,
      capacity: row.capacity,
    }));
  }

  async coverage(domain: ShardDomain, shardCount: number): Promise<ShardCoverage> {
    const held = await shardsLockedByAnyone(this.pool, SHARD_LOCK_NAMESPACE[domain]);
    const unowned = Array.from({ length: shardCount }, (_, shard) => shard).filter((s) => !held.has(s));
    return { domain, shardCount, unowned };
  }
}
