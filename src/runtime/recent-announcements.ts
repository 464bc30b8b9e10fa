/**
 * The execution ids announced finished most recently, as one process's subscriber received them:
 * at most `capacity` ids, none older than `ttlMs`. A wait registered just after its execution's
 * announcement arrived finds it here instead of waiting for an announcement that already passed.
 * O(1) per id (a Map keeps insertion order, so its first entry is the oldest).
 */
export class RecentAnnouncements {
  /** Id → epoch ms it was received; oldest first. */
  private readonly received = new Map<string, number>();
  /** Receipt time of the newest id forgotten so far (epoch ms); -Infinity while none was. */
  private forgottenThrough = Number.NEGATIVE_INFINITY;
  private readonly capacity: number;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    options: {
      /** Most ids kept (default 10,000); the oldest is forgotten to make room. */
      capacity?: number;
      /** Longest an id is kept, in ms (default 30,000). */
      ttlMs?: number;
      /** Clock, epoch ms (default Date.now). */
      now?: () => number;
    } = {},
  ) {
    this.capacity = options.capacity ?? 10_000;
    this.ttlMs = options.ttlMs ?? 30_000;
    this.now = options.now ?? Date.now;
    if (!Number.isInteger(this.capacity) || this.capacity < 1)
      throw new RangeError(`capacity must be a positive integer, got ${this.capacity}`);
    if (!(this.ttlMs > 0)) throw new RangeError(`ttlMs must be positive, got ${this.ttlMs}`);
  }

  /** Ids kept now. */
  get size(): number {
    return this.received.size;
  }

  add(executionId: string): void {
    const now = this.now();
    // Re-inserted, so its place in the order is its newest receipt.
    this.received.delete(executionId);
    this.received.set(executionId, now);
    this.expire(now);
    if (this.received.size > this.capacity) this.forgetOldest();
  }

  has(executionId: string): boolean {
    this.expire(this.now());
    return this.received.has(executionId);
  }

  /**
   * True when every id received at or after `since` (epoch ms) is still kept: nothing received
   * since then was forgotten, so an id absent here was not received since then.
   */
  keepsSince(since: number): boolean {
    this.expire(this.now());
    return this.forgottenThrough < since;
  }

  private expire(now: number): void {
    for (const receivedAt of this.received.values()) {
      if (receivedAt > now - this.ttlMs) return;
      this.forgetOldest();
    }
  }

  private forgetOldest(): void {
    const oldest = this.received.entries().next();
    if (oldest.done) return;
    const [executionId, receivedAt] = oldest.value;
    this.received.delete(executionId);
    this.forgottenThrough = Math.max(this.forgottenThrough, receivedAt);
  }
}
