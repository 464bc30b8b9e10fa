import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Pool } from "pg";
import { OWNERSHIP_ERRORS } from "../errors/ownership-errors.js";
import { TenorError } from "../errors/tenor-error.js";
import type { Logger } from "../observability/logger.js";
import { NO_WORKFLOWS, type ReplicaReport } from "./replica-directory.js";
import { openReservedConnection, type ReservedConnection } from "./reserved-connection.js";
import { SHARD_LOCK_NAMESPACE, type ShardDomain, shardPreference } from "./shard-map.js";
import {
  heartbeatReplica,
  removeReplica,
  shardsLockedByAnyone,
  shardsLockedBySession,
  terminateSession,
  tryLockShard,
  unlockAllShards,
  unlockShard,
} from "./store/pg-shard-ownership.js";
import { bumpOwnerEpoch, type ShardFence } from "./store/shard-fence.js";

/** A shard this replica owns: its fence for writes and a signal aborted when the shard is released. */
export interface ShardLease extends ShardFence {
  /** Aborted the moment the replica stops owning the shard; the shard's work must stop. */
  signal: AbortSignal;
}

/** Why a shard was given up. */
export type ShardReleaseReason = "rebalance" | "overrun" | "session-lost" | "stopping";

/** The work that runs on owned shards (a chain's ingest loop, a confirmation watcher, ...). */
export interface ShardWork {
  /** Called once per acquisition; must return promptly and stop when `lease.signal` aborts. */
  start(lease: ShardLease): void | Promise<void>;
  /** Called once per release, after the signal aborted; resolves when the work has stopped. */
  stop(shard: number, reason: ShardReleaseReason): void | Promise<void>;
}

/** Refresh cadence, liveness window and the deadline derived from them, all in milliseconds. */
export interface OwnershipTimings {
  refreshIntervalMs: number;
  livenessWindowMs: number;
  /**
   * `min(refreshIntervalMs, floor(livenessWindowMs / 3))`: an operation must end before the next
   * refresh is due, and a replica that is stuck must have released its shards after at most
   * one refresh plus one deadline, well inside the window after which peers stop counting it.
   */
  lockDeadlineMs: number;
}

/** Derives the lock deadline (see {@link OwnershipTimings.lockDeadlineMs}). */
export function resolveOwnershipTimings(input: {
  refreshIntervalMs: number;
  livenessWindowMs: number;
}): OwnershipTimings {
  // Only the two timings: callers pass their whole options (connection string included), and
  // these timings are logged as they are.
  return {
    refreshIntervalMs: input.refreshIntervalMs,
    livenessWindowMs: input.livenessWindowMs,
    lockDeadlineMs: Math.min(input.refreshIntervalMs, Math.floor(input.livenessWindowMs / 3)),
  };
}

export interface ShardOwnerOptions {
  connectionString: string;
  /** An ordinary pool, used only to terminate this replica's stuck backend after an overrun. */
  pool: Pool;
  domain: ShardDomain;
  shardCount: number;
  refreshIntervalMs: number;
  livenessWindowMs: number;
  logger: Logger;
  /** Default: `<host>:<pid>:<random>`, unique per process start. */
  replicaId?: string;
  work?: ShardWork;
  /** Called after a refresh that changed the owned set, with the shards now owned (ascending). */
  onChange?: (owned: readonly number[]) => void;
  /** What the heartbeat reports about this replica (docs/ownership.md, "Who is alive"). */
  report?: () => ReplicaReport;
}

/** Counters an operator (or a metric exporter) reads. */
export interface ShardOwnerStats {
  refreshes: number;
  /** Lock operations that overran their deadline (each released every shard). */
  overruns: number;
  /** Sessions lost to any other error (connection reset, server restart). */
  sessionFailures: number;
  acquisitions: number;
  releases: number;
}

interface Held {
  lease: ShardLease;
  controller: AbortController;
}

/**
 * Owns a fair share of a domain's shards with PostgreSQL session advisory locks on one reserved
 * connection (docs/ownership.md, "Owning a shard"). Every `refreshIntervalMs` it writes its
 * heartbeat, counts the live replicas (recent heartbeat *and* a session that still exists),
 * re-asserts the locks it holds, releases any surplus over `ceil(shardCount / live)` and takes free
 * shards up to that share. Each operation has a deadline; an overrun, or any session error,
 * releases every shard, stops their work and rebuilds the connection at the next refresh.
 */
export class ShardOwner {
  readonly replicaId: string;
  readonly timings: OwnershipTimings;
  readonly stats: ShardOwnerStats = {
    refreshes: 0,
    overruns: 0,
    sessionFailures: 0,
    acquisitions: 0,
    releases: 0,
  };
  private readonly held = new Map<number, Held>();
  private readonly namespace: number;
  private readonly logger: Logger;
  private session: ReservedConnection | undefined;
  private timer: NodeJS.Timeout | undefined;
  private cycle: Promise<void> = Promise.resolve();
  private stopped = false;
  private lastReported = "";

  constructor(private readonly options: ShardOwnerOptions) {
    this.replicaId = options.replicaId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.timings = resolveOwnershipTimings(options);
    this.namespace = SHARD_LOCK_NAMESPACE[options.domain];
    this.logger = options.logger.child({ component: "ownership" });
  }

  /** Runs the first refresh (so a healthy start owns its share at once), then refreshes on the interval. */
  async start(): Promise<void> {
    this.cycle = this.refresh();
    await this.cycle;
    this.logger.info("shard ownership started", {
      replicaId: this.replicaId,
      domain: this.options.domain,
      shardCount: this.options.shardCount,
      ...this.timings,
      owned: this.held.size,
    });
    this.scheduleNext(Date.now());
  }

  /** The shards owned now, ascending. */
  owned(): number[] {
    return [...this.held.keys()].sort((a, b) => a - b);
  }

  /** The lease of `shard` while it is owned. */
  lease(shard: number): ShardLease | undefined {
    return this.held.get(shard)?.lease;
  }

  /** Stops refreshing, stops every shard's work, unlocks, removes the heartbeat and closes the session. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.cycle;
    await this.releaseAll("stopping");
    const session = this.session;
    this.session = undefined;
    if (!session) return;
    try {
      await this.op("unlock-all", unlockAllShards(session.client));
      await this.op("deregister", removeReplica(session.client, this.replicaId));
      await session.client.end();
    } catch {
      session.destroy();
    }
  }

  private scheduleNext(startedAt: number): void {
    if (this.stopped) return;
    const delay = Math.max(0, startedAt + this.timings.refreshIntervalMs - Date.now());
    this.timer = setTimeout(() => {
      const begun = Date.now();
      this.cycle = this.refresh().finally(() => this.scheduleNext(begun));
    }, delay);
    this.timer.unref();
  }

  /** One refresh; never throws (a failure releases everything and the next refresh recovers). */
  private async refresh(): Promise<void> {
    try {
      if (!this.session) this.session = await this.op("connect", this.connect());
      const live = await this.heartbeat(this.session);
      await this.reassert(this.session);
      const target = Math.ceil(this.options.shardCount / Math.max(1, live));
      await this.releaseSurplus(this.session, target);
      if (this.held.size < target) await this.acquireUpTo(this.session, target, live);
      this.stats.refreshes++;
    } catch (error) {
      await this.failSession(error);
    }
    this.reportChange();
  }

  private connect(): Promise<ReservedConnection> {
    return openReservedConnection({
      connectionString: this.options.connectionString,
      applicationName: `tenor-${this.options.domain}-shards`,
      deadPeerMs: this.timings.livenessWindowMs,
      connectTimeoutMs: this.timings.lockDeadlineMs,
    });
  }

  /** Writes the heartbeat and returns the live replicas of the domain, this one included. */
  private async heartbeat(session: ReservedConnection): Promise<number> {
    return this.op(
      "heartbeat",
      heartbeatReplica(
        session.client,
        {
          id: this.replicaId,
          domain: this.options.domain,
          host: hostname(),
          pid: process.pid,
          report: this.options.report?.() ?? NO_WORKFLOWS,
        },
        this.timings.livenessWindowMs,
      ),
    );
  }

  /** Confirms the session still holds every lock this replica believes it owns. */
  private async reassert(session: ReservedConnection): Promise<void> {
    const locked = await this.op("reassert", shardsLockedBySession(session.client, this.namespace));
    for (const shard of this.owned()) {
      if (locked.has(shard)) continue;
      this.logger.error("a shard lock vanished from the session; releasing the shard", { shard });
      await this.releaseOne(shard, "session-lost");
    }
  }

  private async releaseSurplus(session: ReservedConnection, target: number): Promise<void> {
    if (this.held.size <= target) return;
    const byPreference = this.owned().sort((a, b) => this.preference(a) - this.preference(b));
    const surplus = byPreference.slice(0, this.held.size - target);
    for (const shard of surplus) {
      await this.releaseOne(shard, "rebalance");
      await this.op("unlock", unlockShard(session.client, this.namespace, shard));
    }
    this.logger.info("released surplus shards", { shards: surplus, owned: this.held.size, target });
  }

  private async acquireUpTo(session: ReservedConnection, target: number, live: number): Promise<void> {
    const taken = await this.op("list-locks", shardsLockedByAnyone(session.client, this.namespace));
    const free = Array.from({ length: this.options.shardCount }, (_, shard) => shard)
      .filter((shard) => !taken.has(shard) && !this.held.has(shard))
      .sort((a, b) => this.preference(b) - this.preference(a));
    const acquired: number[] = [];
    for (const shard of free) {
      if (this.held.size >= target) break;
      if (!(await this.op("try-lock", tryLockShard(session.client, this.namespace, shard)))) continue;
      const epoch = await this.bumpEpoch(session, shard);
      if (epoch === null) continue;
      await this.startOne(shard, epoch);
      acquired.push(shard);
    }
    if (acquired.length > 0)
      this.logger.info("acquired shards", { shards: acquired, owned: this.held.size, target, live });
  }

  /**
   * The new epoch of a freshly locked shard, or null when its epoch row is still held by a fenced
   * write of the previous owner (frozen inside it): the shard is unlocked again and left for the
   * next refresh, and the shards this replica owns are not touched. The row wait is bounded by
   * half the deadline, so it can never overrun the refresh and release everything.
   */
  private async bumpEpoch(session: ReservedConnection, shard: number): Promise<string | null> {
    const lockTimeoutMs = Math.max(1, Math.floor(this.timings.lockDeadlineMs / 2));
    try {
      return await this.op(
        "epoch",
        bumpOwnerEpoch(session.client, this.options.domain, shard, this.replicaId, lockTimeoutMs),
      );
    } catch (error) {
      if (!(error instanceof TenorError) || error.code !== OWNERSHIP_ERRORS.SHARD_EPOCH_BUSY) throw error;
      await this.op("unlock", unlockShard(session.client, this.namespace, shard));
      this.logger.info("shard left for the next refresh: its previous owner's fenced write holds it", {
        shard,
        lockTimeoutMs,
      });
      return null;
    }
  }

  private async startOne(shard: number, epoch: string): Promise<void> {
    const controller = new AbortController();
    const lease: ShardLease = { domain: this.options.domain, shard, epoch, signal: controller.signal };
    this.held.set(shard, { lease, controller });
    this.stats.acquisitions++;
    try {
      await this.options.work?.start(lease);
    } catch (error) {
      this.logger.error("shard work failed to start", { shard, error: (error as Error).message });
    }
  }

  private async releaseOne(shard: number, reason: ShardReleaseReason): Promise<void> {
    const held = this.held.get(shard);
    if (!held) return;
    this.held.delete(shard);
    held.controller.abort(
      new TenorError(OWNERSHIP_ERRORS.SHARD_RELEASED, `shard ${shard} released (${reason})`),
    );
    this.stats.releases++;
    try {
      await this.options.work?.stop(shard, reason);
    } catch (error) {
      this.logger.error("shard work failed to stop", { shard, reason, error: (error as Error).message });
    }
  }

  private async releaseAll(reason: ShardReleaseReason): Promise<number> {
    const shards = this.owned();
    // Abort every lease synchronously first: no shard's work may continue while others stop.
    for (const shard of shards) this.held.get(shard)?.controller.abort();
    await Promise.all(shards.map((shard) => this.releaseOne(shard, reason)));
    return shards.length;
  }

  /**
   * Gives up everything after a deadline overrun or a session error: stops every shard's work,
   * tears the reserved socket down, and asks another connection to terminate the old backend so
   * its locks are freed even if the server has not noticed yet. The next refresh reconnects.
   */
  private async failSession(error: unknown): Promise<void> {
    const overrun = error instanceof TenorError && error.code === OWNERSHIP_ERRORS.SHARD_LOCK_DEADLINE;
    if (overrun) this.stats.overruns++;
    else this.stats.sessionFailures++;
    const session = this.session;
    this.session = undefined;
    const released = await this.releaseAll(overrun ? "overrun" : "session-lost");
    session?.destroy();
    if (session) void this.terminateBackend(session.backendPid);
    const fields = {
      replicaId: this.replicaId,
      released,
      overruns: this.stats.overruns,
      sessionFailures: this.stats.sessionFailures,
      error: (error as Error).message,
      ...(overrun
        ? { operation: (error as TenorError).details.operation, deadlineMs: this.timings.lockDeadlineMs }
        : {}),
    };
    if (overrun)
      this.logger.warn(
        "a lock operation overran its deadline; released every shard, rebuilding the connection",
        fields,
      );
    else this.logger.warn("the reserved connection failed; released every shard, rebuilding it", fields);
  }

  private async terminateBackend(pid: number): Promise<void> {
    try {
      await this.op(
        "terminate-old-session",
        terminateSession(this.options.pool, pid, `tenor-${this.options.domain}-shards`),
      );
    } catch (error) {
      this.logger.debug("could not terminate the old reserved session", {
        pid,
        error: (error as Error).message,
      });
    }
  }

  /** Races `promise` against the lock deadline. */
  private op<T>(operation: string, promise: Promise<T>): Promise<T> {
    promise.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new TenorError(
              OWNERSHIP_ERRORS.SHARD_LOCK_DEADLINE,
              `${operation} did not finish within ${this.timings.lockDeadlineMs} ms`,
              { retryable: true, details: { operation, deadlineMs: this.timings.lockDeadlineMs } },
            ),
          ),
        this.timings.lockDeadlineMs,
      );
    });
    return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
  }

  private preference(shard: number): number {
    return shardPreference(this.replicaId, shard);
  }

  private reportChange(): void {
    const owned = this.owned();
    const key = owned.join(",");
    if (key === this.lastReported) return;
    this.lastReported = key;
    this.options.onChange?.(owned);
  }
}
