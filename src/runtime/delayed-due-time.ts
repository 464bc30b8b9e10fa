import type { Redis } from "ioredis";

/**
 * A delayed job's `delay` made to count from the job's `timestamp`, so `timestamp + delay` is the
 * instant the job is due. BullMQ's `moveToDelayed` stores the delay from the moment of the move,
 * while `timestamp` stays the job's creation: Bull Board, which shows `timestamp + delay` as "will
 * run at", then shows a parked execution due hours earlier than it is (by the time between the
 * job's creation and its park). The delayed set's score, which decides when it runs, is untouched.
 *
 * KEYS: the queue's delayed set, the job's hash; ARGV: job id, due at (epoch ms). Only while the
 * job is still delayed for that very instant (its score is `due × 0x1000` plus a tie-breaker
 * below 0x1000): a job promoted, taken and parked again meanwhile keeps the delay of its newer
 * park. Answers 1 when it wrote the delay, else 0.
 */
const ALIGN_DELAY = `
local score = redis.call("ZSCORE", KEYS[1], ARGV[1])
if not score then return 0 end
local due = tonumber(ARGV[2])
if math.floor(tonumber(score) / 4096) ~= due then return 0 end
local created = tonumber(redis.call("HGET", KEYS[2], "timestamp"))
if not created then return 0 end
redis.call("HSET", KEYS[2], "delay", string.format("%d", math.max(0, due - created)))
return 1
`;

/**
 * Rewrites a delayed job's `delay` so that `timestamp + delay` is `at` (see ALIGN_DELAY); a job
 * no longer delayed for `at` is left alone. `queueKey` is the queue's qualified name
 * (`<prefix>:<queue>`), whose keys share the prefix's hash tag on a Redis Cluster.
 */
export async function alignDelayedDueTime(
  connection: Redis,
  queueKey: string,
  jobId: string,
  at: number,
): Promise<boolean> {
  const written = await connection.eval(
    ALIGN_DELAY,
    2,
    `${queueKey}:delayed`,
    `${queueKey}:${jobId}`,
    jobId,
    String(Math.trunc(at)),
  );
  return written === 1;
}
