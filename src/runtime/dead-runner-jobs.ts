import type { Redis } from "ioredis";

/** One BullMQ worker of a runner: the queue's qualified name (`<prefix>:<queue>`) and the worker id. */
export interface RunnerWorker {
  queue: string;
  worker: string;
}

/** What a runner registers so that a survivor can take its jobs back the moment it dies. */
export interface RunnerRegistration {
  /** The runner's liveness key (its PostgreSQL session advisory lock: src/ownership/store/pg-runner-liveness.ts). */
  key: number;
  workers: RunnerWorker[];
  host: string;
  pid: number;
}

/**
 * The runners of one deployment and their BullMQ workers, in one Redis hash under the prefix
 * (so on a Redis Cluster it lives in the queues' slot). Losing it (FLUSHALL) costs only speed:
 * each runner writes itself back at its next check, and meanwhile a dead runner's jobs are
 * taken over by lock expiry as before.
 */
export class RunnerDirectory {
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.key = `${prefix}:runners`;
  }

  async register(runnerId: string, registration: RunnerRegistration): Promise<void> {
    await this.redis.hset(this.key, runnerId, JSON.stringify(registration));
  }

  async list(): Promise<Map<string, RunnerRegistration>> {
    const all = await this.redis.hgetall(this.key);
    const runners = new Map<string, RunnerRegistration>();
    for (const [id, text] of Object.entries(all)) {
      try {
        runners.set(id, JSON.parse(text) as RunnerRegistration);
      } catch {
        // Not ours to interpret; ignored (a later release may write another shape).
      }
    }
    return runners;
  }

  async forget(runnerId: string): Promise<void> {
    await this.redis.hdel(this.key, runnerId);
  }
}

/**
 * KEYS: active, wait, meta, marker, events of one queue; ARGV: the queue's key prefix
 * (`<qualified name>:`), then the dead workers' ids. Moves every active job whose lock token
 * belongs to one of those workers back to wait, exactly as BullMQ's stalled-job check would once
 * the lock expired (moveStalledJobsToWait: lock deleted, `stc` counted, job pushed to wait, a
 * marker unless the queue is paused or at its global concurrency, `stalled` and `waiting`
 * events). A job whose lock another worker holds, or that has no lock, is left to BullMQ.
 * Idempotent: several survivors may run it at once.
 */
const RECLAIM_DEAD_WORKER_JOBS = `
local moved = {}
local active = redis.call("LRANGE", KEYS[1], 0, -1)
for _, jobId in ipairs(active) do
  local lockKey = ARGV[1] .. jobId .. ":lock"
  local token = redis.call("GET", lockKey)
  if token then
    for i = 2, #ARGV do
      local owner = ARGV[i] .. ":"
      if string.sub(token, 1, #owner) == owner then
        redis.call("DEL", lockKey)
        if redis.call("LREM", KEYS[1], 1, jobId) > 0 then
          redis.call("HINCRBY", ARGV[1] .. jobId, "stc", 1)
          redis.call("RPUSH", KEYS[2], jobId)
          local meta = redis.call("HMGET", KEYS[3], "paused", "concurrency")
          local maxed = meta[2] and redis.call("LLEN", KEYS[1]) >= tonumber(meta[2])
          if not meta[1] and not maxed then redis.call("ZADD", KEYS[4], 0, "0") end
          redis.call("XADD", KEYS[5], "*", "event", "stalled", "jobId", jobId)
          redis.call("XADD", KEYS[5], "*", "event", "waiting", "jobId", jobId, "prev", "active")
          table.insert(moved, jobId)
        end
        break
      end
    end
  end
end
return moved
`;

/**
 * Moves the active jobs of dead workers on one queue back to wait, so a live worker picks them
 * up now instead of after lock expiry and the next stalled check. Only for workers whose runner
 * is known dead (its PostgreSQL session ended): a live worker's job moved this way would run
 * twice (safe under fencing, but wasted work).
 * @returns the ids of the jobs moved.
 */
export async function reclaimDeadWorkerJobs(
  redis: Redis,
  queue: string,
  workerIds: readonly string[],
): Promise<string[]> {
  if (workerIds.length === 0) return [];
  const keys = ["active", "wait", "meta", "marker", "events"].map((k) => `${queue}:${k}`);
  const moved = (await redis.eval(
    RECLAIM_DEAD_WORKER_JOBS,
    keys.length,
    ...keys,
    `${queue}:`,
    ...workerIds,
  )) as string[];
  return moved;
}
