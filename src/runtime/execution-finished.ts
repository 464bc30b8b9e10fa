import type { Redis } from "ioredis";
import type { FinishedNotifications } from "../engine/execution-client.js";
import type { Logger } from "../observability/logger.js";

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
 */
export class FinishedExecutionListener implements FinishedNotifications {
  private readonly watchers = new Map<string, Set<() => void>>();
  private subscriber: Redis | undefined;
  private subscribed: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly logger: Logger,
  ) {}

  /** Executions waited for now (for tests and metrics). */
  get watching(): number {
    return this.watchers.size;
  }

  async watch(executionId: string, onFinished: () => void): Promise<() => void> {
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
    try {
      await this.subscribe();
    } catch (error) {
      // The waiter's fallback reads answer it; the next watch tries again.
      this.subscribed = undefined;
      this.logger.warn("could not subscribe to finished executions; waits fall back to reads", {
        error: (error as Error).message,
      });
    }
    return stop;
  }

  private subscribe(): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the finished-execution listener is closed"));
    if (!this.subscriber) {
      const subscriber = this.redis.duplicate();
      subscriber.on("error", (error: Error) =>
        this.logger.debug("finished-execution subscriber error", { error: error.message }),
      );
      subscriber.on("message", (_channel: string, executionId: string) => this.deliver(executionId));
      this.subscriber = subscriber;
    }
    const subscriber = this.subscriber;
    this.subscribed ??= subscriber.subscribe(finishedChannel(this.prefix)).then(() => undefined);
    return this.subscribed;
  }

  private deliver(executionId: string): void {
    const set = this.watchers.get(executionId);
    if (!set) return;
    for (const onFinished of [...set]) onFinished();
  }

  async close(): Promise<void> {
    this.closed = true;
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber) await subscriber.quit().catch(() => subscriber.disconnect());
  }
}
