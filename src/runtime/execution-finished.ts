import type { Redis } from "ioredis";
import type { FinishedNotifications, FinishedWatch } from "../engine/execution-client.js";
import type { Logger } from "../observability/logger.js";
import { RecentAnnouncements } from "./recent-announcements.js";

/**
 * The Redis pub/sub channel on which runners announce finished executions (message: the
 * execution id). Classic PUBLISH reaches every subscriber of the deployment, on a Redis Cluster
 * too (the cluster bus forwards it to every node).
 */
export function finishedChannel(prefix: string): string {
  return `${prefix}:executions:finished`;
}

/**
 * Announces that an execution's terminal status committed. Called after the commit, never
 * before: a waiter told "finished" reads the projection next. A lost announcement (the runner
 * died in between, Redis was down) costs a waiter one fallback interval, nothing more.
 */
export async function announceFinished(redis: Redis, prefix: string, executionId: string): Promise<void> {
  await redis.publish(finishedChannel(prefix), executionId);
}

/**
 * One subscription per process to the finished channel, fanned out to the waits registered for
 * each execution (`Prefer: wait`, the client's wait-for-terminal). Opens its own connection (a
 * subscribed connection can issue no other command) from `redis`'s options, lazily on the first
 * watch; ioredis re-subscribes after a reconnect, and what was published while it was away is
 * answered by the waiters' fallback reads.
 *
 * It also keeps the ids announced in the last moments ({@link RecentAnnouncements}) and the time
 * since which its subscription has been acknowledged and unbroken, so a wait for an execution
 * started after that time can trust that an announcement it has not heard has not been made, and
 * skip reading an execution that has only just started.
 */
export class FinishedExecutionListener implements FinishedNotifications {
  private readonly watchers = new Map<string, Set<() => void>>();
  private readonly recent: RecentAnnouncements;
  private subscriber: Redis | undefined;
  private subscribed: Promise<void> | undefined;
  /** Epoch ms the current subscription was acknowledged; undefined while none is known live. */
  private liveSince: number | undefined;
  /** Counts the connection's breaks, so an acknowledgement sent before a break marks nothing. */
  private breaks = 0;
  /** A break happened since the last acknowledgement: the next `ready` must be confirmed. */
  private broken = false;
  private closed = false;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly logger: Logger,
    options: { recent?: ConstructorParameters<typeof RecentAnnouncements>[0] } = {},
  ) {
    this.recent = new RecentAnnouncements(options.recent);
  }

  /** Executions waited for now (for tests and metrics). */
  get watching(): number {
    return this.watchers.size;
  }

  async watch(
    executionId: string,
    onFinished: () => void,
    options: { since?: number } = {},
  ): Promise<FinishedWatch> {
    let set = this.watchers.get(executionId);
    if (!set) {
      set = new Set();
      this.watchers.set(executionId, set);
    }
    set.add(onFinished);
    const stop = () => {
      const current = this.watchers.get(executionId);
      current?.delete(onFinished);
      if (current?.size === 0) this.watchers.delete(executionId);
    };
    // From here on every announcement reaches onFinished; one that arrived before is only in
    // the recent memory, and whether that memory still holds all since `since` is known now.
    const since = options.since;
    const kept = since !== undefined && this.recent.keepsSince(since);
    if (this.recent.has(executionId)) onFinished();
    try {
      await this.subscribe();
    } catch (error) {
      // The waiter's fallback reads answer it; the next watch tries again.
      this.subscribed = undefined;
      this.logger.warn("could not subscribe to finished executions; waits fall back to reads", {
        error: (error as Error).message,
      });
    }
    return { stop, heardSince: kept && since !== undefined && this.liveThroughout(since) };
  }

  /** True when the subscription has been acknowledged and unbroken from `since` (epoch ms) until now. */
  private liveThroughout(since: number): boolean {
    return this.subscriber?.status === "ready" && this.liveSince !== undefined && this.liveSince <= since;
  }

  private subscribe(): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the finished-execution listener is closed"));
    if (!this.subscriber) this.subscriber = this.connect();
    this.subscribed ??= this.confirm(this.subscriber);
    return this.subscribed;
  }

  private connect(): Redis {
    const subscriber = this.redis.duplicate();
    subscriber.on("error", (error: Error) =>
      this.logger.debug("finished-execution subscriber error", { error: error.message }),
    );
    subscriber.on("message", (_channel: string, executionId: string) => this.deliver(executionId));
    // What is published while the connection is down is lost to this subscriber: from a break
    // on, nothing unheard may be taken as unannounced.
    const lose = () => {
      this.liveSince = undefined;
      this.breaks += 1;
      this.broken = true;
    };
    subscriber.on("close", lose);
    subscriber.on("end", lose);
    subscriber.on("reconnecting", lose);
    // ioredis emits `ready` and then sends its re-SUBSCRIBE, without telling when that is
    // acknowledged (event_handler.js, readyHandler); a SUBSCRIBE of our own queued behind it is
    // acknowledged after it, on the same connection, so its reply marks the channel live again.
    subscriber.on("ready", () => {
      if (!this.broken || this.subscribed === undefined || this.closed) return;
      this.broken = false;
      this.confirm(subscriber).catch((error: Error) =>
        this.logger.debug("could not confirm the finished-execution re-subscription", {
          error: error.message,
        }),
      );
    });
    return subscriber;
  }

  /** SUBSCRIBEs and, if no break came in between, records the acknowledgement's time. */
  private async confirm(subscriber: Redis): Promise<void> {
    const breaks = this.breaks;
    await subscriber.subscribe(finishedChannel(this.prefix));
    // A Cluster subscribes on a node connection of its own whose breaks it does not report.
    const cluster = (subscriber as { isCluster?: boolean }).isCluster === true;
    if (breaks === this.breaks && subscriber.status === "ready" && !cluster) this.liveSince = Date.now();
  }

  private deliver(executionId: string): void {
    this.recent.add(executionId);
    const set = this.watchers.get(executionId);
    if (!set) return;
    for (const onFinished of [...set]) onFinished();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.liveSince = undefined;
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber) await subscriber.quit().catch(() => subscriber.disconnect());
  }
}
