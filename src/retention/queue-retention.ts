import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { RetentionPolicy } from "../store/retention/retention-policy.js";

/**
 * Completed queue messages: BullMQ jobs in a queue's `completed` set whose finish time is older
 * than the cutoff, removed `limit` at a time with `Queue.clean` (one bounded Lua call each).
 * Failed jobs are kept for diagnosis (their own age limit applies); PostgreSQL holds the truth.
 */
export function completedJobRetentionPolicy(queue: Queue, redis: Redis): RetentionPolicy {
  return {
    name: `queue:${queue.name}`,
    async deleteBatch(cutoff, limit) {
      const grace = Math.max(0, Date.now() - cutoff.getTime());
      const removed = await queue.clean(grace, limit, "completed");
      return { deleted: { [`completed jobs (${queue.name})`]: removed.length }, primary: removed.length };
    },
    async remaining(cutoff) {
      // The completed set is scored by finish time: count those finished before the cutoff.
      return redis.zcount(`${queue.qualifiedName}:completed`, "-inf", `(${cutoff.getTime()}`);
    },
  };
}
