import type { ReplicaReport } from "./store/pg-shard-ownership.js";
import type { ShardDomain } from "./store/shard-fence.js";

export type { ReplicaReport } from "./store/pg-shard-ownership.js";

/**
 * The replicas of the platform as an operator sees them (docs/ownership.md, "Who is alive"):
 * every runner and indexer writes a heartbeat with its shard ownership's refresh, and a replica is
 * live while that heartbeat is inside the liveness window *and* the PostgreSQL session it holds
 * its shard locks on still exists. Readers above ownership (Platform Status, `tenor runners`,
 * `tenor doctor`, the live-replica gauge) are handed a {@link ReplicaDirectory}; the statements
 * stay in ownership's own store.
 */

/** The report of a replica that runs no workflows. */
export const NO_WORKFLOWS: ReplicaReport = Object.freeze({ workflows: [], busy: null, capacity: null });

export interface ReplicaView extends ReplicaReport {
  id: string;
  domain: ShardDomain;
  host: string;
  pid: number;
  startedAt: Date;
  lastHeartbeatAt: Date;
  /** Milliseconds since the last heartbeat, by the database's clock (no replica's clock counts). */
  heartbeatAgeMs: number;
  /** Heartbeat inside the liveness window and its session still open. */
  live: boolean;
  /** The shards whose locks its session holds now, ascending (empty when not live). */
  shards: number[];
}

/** Which shards of a domain no live session holds. */
export interface ShardCoverage {
  domain: ShardDomain;
  shardCount: number;
  unowned: number[];
}

export interface ReplicaDirectory {
  /**
   * Every live replica, and the ones that stopped heartbeating within the last hour (`live:
   * false`): a runner that just died is named, not silently gone. Runners first, live first,
   * oldest start first.
   */
  list(): Promise<ReplicaView[]>;
  /** The shards of `domain` (of `shardCount`) whose lock no session holds now. */
  coverage(domain: ShardDomain, shardCount: number): Promise<ShardCoverage>;
}
