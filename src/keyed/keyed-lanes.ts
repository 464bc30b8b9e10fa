import type { Redis } from "ioredis";
import { CLAIM_LUA } from "./lua/claim.js";
import { ENQUEUE_LUA } from "./lua/enqueue.js";
import { RENEW_LUA, REQUEUE_LUA } from "./lua/lease.js";
import { RELEASE_LUA } from "./lua/release.js";
import { LuaScript } from "./lua-script.js";

const ENQUEUE = new LuaScript("keyed-enqueue", ENQUEUE_LUA);
const CLAIM = new LuaScript("keyed-claim", CLAIM_LUA);
const RELEASE = new LuaScript("keyed-release", RELEASE_LUA);
const REQUEUE = new LuaScript("keyed-requeue", REQUEUE_LUA);
const RENEW = new LuaScript("keyed-renew", RENEW_LUA);

/** Items per script call: keeps each atomic step short so Redis never stalls other clients. */
const CHUNK = 500;

/** One unit of keyed work as Redis sees it: an id in a lane, ordered by its PostgreSQL seq. */
export interface LaneItem {
  id: string;
  lane: string;
  /** PostgreSQL arrival order (a bigint as text or number; exact below 2^53). */
  seq: string | number;
  /** Most items of this lane in flight at once. */
  limit: number;
  /** Pub/sub channel that wants the reply; '' or absent keeps the stored one. */
  channel?: string;
  /** Rebuild only: the item had already started (a keyed workflow past its admission). */
  inFlight?: boolean;
}

export interface ClaimedItem {
  id: string;
  lane: string;
  channel: string;
}

/**
 * The Redis side of keyed serialization for one space (entity commands or keyed workflows):
 * per-lane FIFO, at most `limit` in flight per lane, every multi-key change in one Lua script.
 *
 * In `dispatch` mode (entities) a promoted item goes to the space's ready list, where runners
 * claim it under a lease. In gate mode (keyed workflows) promoted ids are returned and the caller
 * starts them (enqueues their BullMQ job); the slot lasts until the caller releases it.
 */
export class KeyedLanes {
  readonly base: string;
  private readonly keys: { items: string; meta: string; flight: string; ready: string; rebuild: string };

  constructor(
    private readonly redis: Redis,
    prefix: string,
    readonly space: string,
    private readonly dispatch: boolean,
  ) {
    this.base = `${prefix}:keyed:${space}`;
    this.keys = {
      items: `${this.base}:items`,
      meta: `${this.base}:meta`,
      flight: `${this.base}:flight`,
      ready: `${this.base}:ready`,
      rebuild: `${this.base}:rebuild`,
    };
  }

  /**
   * The space's depth over all lanes (metrics): items `pending` behind their lane's limit, items
   * `inFlight`, and of those the ones `ready` but unclaimed (dispatch mode). Never per lane: lane
   * names are keys, which must not become metric labels.
   */
  async depth(): Promise<{ pending: number; inFlight: number; ready: number }> {
    const replies = await this.redis
      .multi()
      .hlen(this.keys.items)
      .zcard(this.keys.flight)
      .llen(this.keys.ready)
      .exec();
    const [items, inFlight, ready] = (replies ?? []).map(([error, value]) => (error ? 0 : Number(value)));
    return {
      pending: Math.max(0, (items ?? 0) - (inFlight ?? 0)),
      inFlight: inFlight ?? 0,
      ready: ready ?? 0,
    };
  }

  /**
   * Adds items (idempotent per id) and promotes their lanes. `lost` means Redis has lost this
   * space's state and not been rebuilt yet: nothing was added, the repair will add them.
   */
  async enqueue(
    items: readonly LaneItem[],
    mode: "live" | "rebuild" = "live",
  ): Promise<{ lost: boolean; promoted: string[] }> {
    const promoted: string[] = [];
    for (let i = 0; i < items.length; i += CHUNK) {
      const args: (string | number)[] = [this.base, this.dispatch ? "1" : "0", mode];
      for (const item of items.slice(i, i + CHUNK)) {
        args.push(
          item.id,
          item.lane,
          String(item.seq),
          item.limit,
          item.channel ?? "",
          item.inFlight ? "f" : "p",
        );
      }
      const { items: itemsKey, meta, flight, ready } = this.keys;
      const result = (await ENQUEUE.run(this.redis, [itemsKey, meta, flight, ready], args)) as string[];
      if (result[0] === "LOST") return { lost: true, promoted };
      promoted.push(...result.slice(1));
    }
    return { lost: false, promoted };
  }

  /** Claims up to `count` ready items under a lease of `leaseMs` (dispatch mode). */
  async claim(count: number, leaseMs: number): Promise<ClaimedItem[]> {
    const flat = (await CLAIM.run(
      this.redis,
      [this.keys.ready, this.keys.flight, this.keys.items],
      [count, leaseMs],
    )) as string[];
    const claimed: ClaimedItem[] = [];
    for (let i = 0; i < flat.length; i += 2) {
      const record = parseRecord(flat[i + 1] as string);
      claimed.push({ id: flat[i] as string, lane: record.lane, channel: record.channel });
    }
    return claimed;
  }

  /** Frees the items' slots and promotes the next of each lane; returns the promoted ids. */
  async release(ids: readonly string[]): Promise<string[]> {
    const promoted: string[] = [];
    for (let i = 0; i < ids.length; i += CHUNK) {
      const result = (await RELEASE.run(
        this.redis,
        [this.keys.items, this.keys.flight, this.keys.ready],
        [this.base, this.dispatch ? "1" : "0", ...ids.slice(i, i + CHUNK)],
      )) as string[];
      promoted.push(...result);
    }
    return promoted;
  }

  /** Extends the leases of items still being worked on. */
  async renew(ids: readonly string[], leaseMs: number): Promise<void> {
    if (ids.length === 0) return;
    await RENEW.run(this.redis, [this.keys.flight], [leaseMs, ...ids]);
  }

  /** Requeues leased items whose lease expired (their runner died or stalled); returns how many. */
  async requeueExpired(max = CHUNK): Promise<number> {
    return (await REQUEUE.run(this.redis, [this.keys.flight, this.keys.ready], ["expired", max])) as number;
  }

  /** Gives leased items back to the ready list at once (a runner that could not finish them). */
  async requeue(ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    return (await REQUEUE.run(this.redis, [this.keys.flight, this.keys.ready], ["ids", ...ids])) as number;
  }

  /** In-flight ids whose score (promotion time in gate mode) is at least `ageMs` old. */
  async inFlightOlderThan(ageMs: number, max = CHUNK): Promise<string[]> {
    const [seconds, micros] = await this.redis.time();
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    return this.redis.zrangebyscore(this.keys.flight, "-inf", now - ageMs, "LIMIT", 0, max);
  }

  /** True unless Redis lost this space since the last rebuild (FLUSHALL, a fresh server). */
  async isWhole(): Promise<boolean> {
    return (await this.redis.exists(this.keys.meta)) === 1;
  }

  /** Marks the space whole: live enqueues are accepted from now on. */
  async markWhole(): Promise<void> {
    await this.redis.hset(this.keys.meta, "rebuiltAt", new Date().toISOString());
  }

  /** A short lock so one runner rebuilds a lost space at a time; true when taken. */
  async tryRebuildLock(owner: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.keys.rebuild, owner, "PX", ttlMs, "NX")) === "OK";
  }

  async releaseRebuildLock(owner: string): Promise<void> {
    if ((await this.redis.get(this.keys.rebuild)) === owner) await this.redis.del(this.keys.rebuild);
  }

  /** Items of one lane: in flight and pending (oldest first). For tests and the operator. */
  async lane(lane: string): Promise<{ inFlight: string[]; pending: string[] }> {
    const [inFlight, pending] = await Promise.all([
      this.redis.smembers(`${this.base}:f:${lane}`),
      this.redis.zrange(`${this.base}:q:${lane}`, 0, -1),
    ]);
    return { inFlight, pending };
  }
}

function parseRecord(record: string): { limit: number; channel: string; lane: string } {
  const first = record.indexOf("|");
  const second = record.indexOf("|", first + 1);
  return {
    limit: Number(record.slice(0, first)),
    channel: record.slice(first + 1, second),
    lane: record.slice(second + 1),
  };
}
