import type { Redis } from "ioredis";
import type { Pool } from "pg";
import type { Role } from "../config/role.js";
import type { TenorConfig } from "../config/schema.js";
import { reservedSessionUrl } from "../config/session-url.js";
import { PROCESS_ERRORS } from "../errors/process-errors.js";
import { TenorError } from "../errors/tenor-error.js";
import { checkReservedSession } from "../ownership/reserved-connection.js";
import { POSTGRES_START_HINT } from "../store/migrations/migration-error.js";
import { createPgPool, pingDatabase } from "../store/pg-pool.js";
import { createRedisConnection, redactUrl } from "../transport/redis-connection.js";

export const REDIS_START_HINT =
  'Start Redis with `redis-server --daemonize yes --port 6379 --save "" --appendonly no` or `docker compose up -d redis`.';

/** The connections every role holds. */
export interface Dependencies {
  pool: Pool;
  /** Producer commands: bounded retries, so a request fails fast when Redis is away. */
  redis: Redis;
  /** Blocking worker commands: `maxRetriesPerRequest: null` (BullMQ #648). */
  workerRedis: Redis;
  close(): Promise<void>;
}

/**
 * Opens PostgreSQL and Redis and proves both answer. An unreachable one is an error naming the
 * URL (password hidden) and how to start it.
 */
export async function connectDependencies(config: TenorConfig, role: Role): Promise<Dependencies> {
  const pool = createPgPool(config.databaseUrl, {
    applicationName: `tenor-${role}`,
    max: config.database.poolMax,
    namedStatements: config.database.namedStatements,
  });
  try {
    await pingDatabase(pool);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new TenorError(
      PROCESS_ERRORS.DEPENDENCY_UNREACHABLE,
      `PostgreSQL at ${redactUrl(config.databaseUrl)} is unreachable (${(error as Error).message}). ${POSTGRES_START_HINT}`,
      { retryable: true, details: { dependency: "postgresql" } },
    );
  }
  // Runners and indexers hold reserved sessions (advisory locks): refuse one that is pooled now,
  // before the role takes any work, rather than warn at every liveness check and shard refresh.
  if (role !== "api") {
    try {
      await checkReservedSession(reservedSessionUrl(config), 5_000);
    } catch (error) {
      await pool.end().catch(() => undefined);
      if (error instanceof TenorError) throw error;
      throw new TenorError(
        PROCESS_ERRORS.DEPENDENCY_UNREACHABLE,
        `PostgreSQL at ${redactUrl(reservedSessionUrl(config))} (reserved sessions) is unreachable (${(error as Error).message}). ${POSTGRES_START_HINT}`,
        { retryable: true, details: { dependency: "postgresql" } },
      );
    }
  }
  const cluster = { cluster: config.redisCluster };
  const redis = createRedisConnection(config.redisUrl, "producer", cluster);
  const workerRedis = createRedisConnection(config.redisUrl, "worker", cluster);
  try {
    await withTimeout(redis.ping(), 5_000);
  } catch (error) {
    redis.disconnect();
    workerRedis.disconnect();
    await pool.end().catch(() => undefined);
    throw new TenorError(
      PROCESS_ERRORS.DEPENDENCY_UNREACHABLE,
      `Redis at ${redactUrl(config.redisUrl)} is unreachable (${(error as Error).message}). ${REDIS_START_HINT}`,
      { retryable: true, details: { dependency: "redis" } },
    );
  }
  return {
    pool,
    redis,
    workerRedis,
    async close() {
      await Promise.allSettled([redis.quit(), workerRedis.quit(), pool.end()]);
    },
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
