import { Cluster, Redis, type RedisOptions } from "ioredis";
import { TenorError } from "../errors/tenor-error.js";
import { TRANSPORT_ERRORS } from "./transport-error-codes.js";

/**
 * Opens an ioredis connection. Worker and blocking connections must use
 * `maxRetriesPerRequest: null`, or a Redis restart leaves BullMQ workers silent
 * (taskforcesh/bullmq #648, #2964). Producer connections keep a bound so API calls fail fast.
 *
 * With `cluster`, `url` names one node of a Redis Cluster and the connection is an ioredis
 * `Cluster` (the other nodes are discovered). It is typed as `Redis`: both implement the same
 * command interface, BullMQ takes either, and every key Tenor uses carries the prefix's hash tag,
 * so each command and script is routed to the one slot of the deployment.
 */
export function createRedisConnection(
  url: string,
  purpose: "worker" | "producer",
  options: { cluster?: boolean } = {},
): Redis {
  const redisOptions: RedisOptions = {
    maxRetriesPerRequest: purpose === "worker" ? null : 3,
    enableReadyCheck: true,
    lazyConnect: false,
    // Reconnect forever with a capped delay: a Redis restart must not need a process restart.
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  };
  if (!options.cluster) return new Redis(url, redisOptions);
  const seed = new URL(url);
  const cluster = new Cluster([{ host: seed.hostname, port: Number(seed.port || 6379) }], {
    redisOptions: {
      ...redisOptions,
      ...(seed.username ? { username: decodeURIComponent(seed.username) } : {}),
      ...(seed.password ? { password: decodeURIComponent(seed.password) } : {}),
    },
    enableReadyCheck: true,
    clusterRetryStrategy: (times) => Math.min(times * 200, 2_000),
  });
  return cluster as unknown as Redis;
}

/** The only eviction policy under which BullMQ's lock and job keys cannot vanish (#921, #2215). */
export const REQUIRED_EVICTION_POLICY = "noeviction";

/** Reads `maxmemory_policy` from INFO (CONFIG GET is disabled on some managed Redis services). */
export async function readEvictionPolicy(redis: Redis): Promise<string> {
  const info = await redis.info("memory");
  const match = /^maxmemory_policy:(\S+)/m.exec(info);
  if (!match?.[1])
    throw new TenorError(
      TRANSPORT_ERRORS.REDIS_POLICY_UNKNOWN,
      "Redis INFO memory did not report maxmemory_policy",
    );
  return match[1];
}

/** Refuses to continue unless Redis will never evict keys; the message says how to fix it. */
export async function assertNoEviction(redis: Redis, url: string): Promise<void> {
  const policy = await readEvictionPolicy(redis);
  if (policy === REQUIRED_EVICTION_POLICY) return;
  throw new TenorError(
    TRANSPORT_ERRORS.REDIS_EVICTION_POLICY,
    `Redis at ${redactUrl(url)} has maxmemory-policy=${policy}; Tenor runners require ${REQUIRED_EVICTION_POLICY} ` +
      "because evicted lock or job keys silently lose or duplicate work. Fix: " +
      `redis-cli -u ${redactUrl(url)} CONFIG SET maxmemory-policy ${REQUIRED_EVICTION_POLICY} ` +
      "(and set it in redis.conf so it survives a restart).",
    { details: { policy, required: REQUIRED_EVICTION_POLICY } },
  );
}

/** Hides the password of a connection URL for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparseable URL)";
  }
}
