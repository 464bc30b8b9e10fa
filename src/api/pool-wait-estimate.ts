import { performance } from "node:perf_hooks";
import type { Pool } from "pg";

/**
 * Weight of the newest hold in the mean hold time: the last ten holds carry about two thirds of
 * it, so the mean follows a change of the database's speed within a few dozen queries and one
 * slow query does not swing it.
 */
const HOLD_WEIGHT = 0.1;

/**
 * How long a request arriving now can expect to wait for a connection of a pool, by Little's
 * law: the requests ahead of it are served `poolSize` at a time, each holding its connection for
 * the mean hold time, so the last of `waiting` gets one after `waiting × meanHold ÷ poolSize`.
 *
 * Why not the queue's length: 40 requests queued for 20 connections held 1 ms each wait 2 ms,
 * while 40 queued behind a database that takes seconds per statement wait seconds. Only the
 * second should be refused.
 *
 * The mean hold is an exponentially weighted mean of the finished holds (HOLD_WEIGHT). While every
 * connection is in use, the youngest hold in progress bounds it from below: when the database
 * stalls no connection is released, and a mean of the holds finished before the stall would keep
 * reporting them as fast.
 *
 * Costs one timestamp per checked-out client (at most `poolSize`); the estimate reads them only
 * while requests wait.
 */
export class PoolWaitEstimate {
  /** When each client now checked out was acquired (performance.now() ms). */
  private readonly heldSince = new Map<object, number>();
  private meanHold = 0;
  private sampled = false;

  constructor(
    /** The pool's `max`: how many connections serve the queue at once. */
    private readonly poolSize: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(poolSize >= 1)) throw new RangeError(`poolSize must be ≥ 1, got ${poolSize}`);
  }

  /** The pool handed `client` to a caller (pg Pool's `acquire` event). */
  acquired(client: object): void {
    this.heldSince.set(client, this.now());
  }

  /** `client` went back to the pool, or was dropped with an error (pg Pool's `release` event). */
  released(client: object): void {
    const since = this.heldSince.get(client);
    // Acquired before the estimate was attached: its hold is unknown, not zero.
    if (since === undefined) return;
    this.heldSince.delete(client);
    const hold = this.now() - since;
    this.meanHold = this.sampled ? this.meanHold + HOLD_WEIGHT * (hold - this.meanHold) : hold;
    this.sampled = true;
  }

  /** The weighted mean of the finished holds, in ms (0 before the first). */
  get meanHoldMs(): number {
    return this.meanHold;
  }

  /** Expected wait, in ms, of a request that queues now behind `waiting` others (0 when none). */
  expectedWaitMs(waiting: number): number {
    if (waiting <= 0) return 0;
    return (waiting * Math.max(this.meanHold, this.youngestHoldMs())) / this.poolSize;
  }

  /**
   * How long the most recently acquired connection has been held, in ms, when every connection is
   * in use; 0 when one is free or still being opened (then nothing says the holds are slow).
   */
  private youngestHoldMs(): number {
    if (this.heldSince.size < this.poolSize) return 0;
    let latest = Number.NEGATIVE_INFINITY;
    for (const since of this.heldSince.values()) latest = Math.max(latest, since);
    return this.now() - latest;
  }
}

/** A pool's expected connection wait, kept current from its events. */
export interface PoolWaitTracker {
  /** Expected wait for a connection of a request arriving now, in ms. */
  expectedWaitMs(): number;
  /** Detaches from the pool's events. */
  stop(): void;
}

/**
 * Feeds a PoolWaitEstimate from `pool`'s `acquire` and `release` events; `pool.options.max`
 * (pg's default 10 when unset) is the pool size.
 */
export function trackPoolWait(pool: Pool): PoolWaitTracker {
  const estimate = new PoolWaitEstimate(pool.options.max ?? 10);
  const onAcquire = (client: object) => estimate.acquired(client);
  const onRelease = (_error: Error | undefined, client: object) => estimate.released(client);
  pool.on("acquire", onAcquire);
  pool.on("release", onRelease);
  return {
    expectedWaitMs: () => estimate.expectedWaitMs(pool.waitingCount),
    stop: () => {
      pool.off("acquire", onAcquire);
      pool.off("release", onRelease);
    },
  };
}
