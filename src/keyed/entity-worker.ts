import type { Redis } from "ioredis";
import type { Pool } from "pg";
import type { Logger } from "../observability/logger.js";
import { KEYED_SPACES } from "../transport/queue-names.js";
import { isBatchConflict, runEntityBatch } from "./entity-batch.js";
import type { EntityRegistry } from "./entity-registry.js";
import { type ClaimedItem, KeyedLanes } from "./keyed-lanes.js";
import type { ReplyMessage } from "./keyed-names.js";

export interface EntityWorkerOptions {
  pool: Pool;
  redis: Redis;
  prefix: string;
  registry: EntityRegistry;
  logger: Logger;
  /** Lease of a claimed command, in ms: a runner that dies holds its commands at most this long. */
  leaseMs: number;
  /** Most commands one claim takes. */
  batchSize: number;
  /** Claim loops per process, each with its own transaction. */
  concurrency: number;
}

export interface EntityWorkers {
  /** Commands this process has finished (done or failed) since it started. */
  finished(): number;
  /** Lets running batches finish, then stops claiming. */
  stop(): Promise<void>;
}

/** Idle polling backs off from 1 ms to this bound, in ms, while no command is ready. */
const MAX_IDLE_MS = 20;

/**
 * The runner's entity workers: each loop claims a batch of ready commands (at most `limit` per
 * key are ever ready), runs it in one transaction, releases the finished commands (which promotes
 * the next of each key) and publishes their replies. A lease renewed while the batch runs ties
 * each slot to a live runner; a dead runner's slots come back when the repair requeues them.
 */
export function startEntityWorkers(options: EntityWorkerOptions): EntityWorkers {
  const lanes = new KeyedLanes(options.redis, options.prefix, KEYED_SPACES.entities, true);
  let stopped = false;
  let finished = 0;
  const loops: Promise<void>[] = [];

  const runBatch = async (claimed: ClaimedItem[]) => {
    const ids = claimed.map((c) => c.id);
    const renewal = setInterval(
      () => void lanes.renew(ids, options.leaseMs).catch(() => undefined),
      Math.max(100, Math.floor(options.leaseMs / 3)),
    );
    try {
      const result = await runEntityBatch(options.pool, options.registry, claimed);
      clearInterval(renewal);
      await lanes.release(result.finished.map((r) => r.id));
      finished += result.finished.length;
      await publish(options.redis, result.finished);
      if (result.skipped.length > 0)
        options.logger.warn(
          "claimed commands of entities this runner does not know; left for another runner",
          {
            count: result.skipped.length,
          },
        );
    } catch (error) {
      clearInterval(renewal);
      // A deadlock or serialization failure: the batch is retried at once.
      if (isBatchConflict(error)) {
        await lanes.requeue(ids).catch(() => undefined);
        return;
      }
      // PostgreSQL or Redis is failing: the leases run out and the repair requeues the batch.
      options.logger.warn("entity batch failed; its commands are retried after their lease", {
        error: (error as Error).message,
        count: ids.length,
      });
      await sleep(Math.min(options.leaseMs, 1_000));
    } finally {
      clearInterval(renewal);
    }
  };

  const loop = async () => {
    let idle = 1;
    while (!stopped) {
      let claimed: ClaimedItem[];
      try {
        claimed = await lanes.claim(options.batchSize, options.leaseMs);
      } catch (error) {
        options.logger.warn("claiming keyed commands failed; retrying", { error: (error as Error).message });
        await sleep(500);
        continue;
      }
      if (claimed.length === 0) {
        await sleep(idle);
        idle = Math.min(idle * 2, MAX_IDLE_MS);
        continue;
      }
      idle = 1;
      await runBatch(claimed);
    }
  };

  for (let i = 0; i < options.concurrency; i++) loops.push(loop());
  return {
    finished: () => finished,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** One message per reply channel, in a single pipelined round trip. */
async function publish(redis: Redis, replies: (ReplyMessage & { channel: string })[]): Promise<void> {
  const byChannel = new Map<string, ReplyMessage[]>();
  for (const { channel, ...message } of replies) {
    if (!channel) continue;
    let list = byChannel.get(channel);
    if (!list) {
      list = [];
      byChannel.set(channel, list);
    }
    list.push(message);
  }
  if (byChannel.size === 0) return;
  const pipeline = redis.pipeline();
  for (const [channel, messages] of byChannel) pipeline.publish(channel, JSON.stringify(messages));
  await pipeline.exec();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
