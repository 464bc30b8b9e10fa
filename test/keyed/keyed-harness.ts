import type { Redis } from "ioredis";
import type pg from "pg";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import type { AnyEntity } from "../../src/keyed/entity.js";
import { EntityClient } from "../../src/keyed/entity-client.js";
import { EntityRegistry } from "../../src/keyed/entity-registry.js";
import { KeyedLanes } from "../../src/keyed/keyed-lanes.js";
import { type KeyedSettings, type KeyedWorkers, startKeyedWorkers } from "../../src/keyed/keyed-workers.js";
import { createLogger } from "../../src/observability/logger.js";
import { createPgPool } from "../../src/store/pg-pool.js";
import { KEYED_SPACES } from "../../src/transport/queue-names.js";
import { createRedisConnection } from "../../src/transport/redis-connection.js";
import type { TestDatabase } from "../support/database.js";
import { waitUntil } from "../support/processes.js";
import { createTestStores } from "../support/test-stores.js";

/** Short leases and a fast repair, so a dead runner's commands come back in about a second. */
export const FAST_KEYED: KeyedSettings = {
  leaseMs: 1_000,
  batchSize: 16,
  concurrency: 2,
  repairIntervalMs: 200,
  graceMs: 500,
};

/**
 * One test file's keyed world: its own database and Redis prefix (optionally its own
 * redis-server), an entity client, and keyed workers started in the test process.
 */
export interface KeyedWorld {
  db: TestDatabase;
  /** The engine's pool (larger than the test database's). */
  pool: pg.Pool;
  prefix: string;
  redisUrl: string;
  redis: Redis;
  registry: EntityRegistry;
  client: EntityClient;
  entityLanes: KeyedLanes;
  /** Starts an in-process runner part for entities (workers + repair). */
  startWorkers(settings?: Partial<KeyedSettings>): Promise<KeyedWorkers>;
  close(): Promise<void>;
}

export async function createKeyedWorld(
  file: string,
  options: { entities: readonly AnyEntity[]; redisUrl?: string; poolSize?: number; pollMs?: number },
): Promise<KeyedWorld> {
  const stores = await createTestStores(file, options.redisUrl ? { redisUrl: options.redisUrl } : {});
  const { db, prefix } = stores;
  const pool = createPgPool(db.url, { applicationName: "keyed-test", max: options.poolSize ?? 10 });
  pool.on("error", () => undefined);
  const url = stores.redisUrl;
  const redis = createRedisConnection(url, "producer");
  redis.on("error", () => undefined);
  const logger = createLogger({ level: "error" });
  const registry = new EntityRegistry(options.entities);
  const client = new EntityClient({ pool, redis, prefix, registry, logger, pollMs: options.pollMs ?? 300 });
  const started: KeyedWorkers[] = [];
  return {
    db,
    pool,
    prefix,
    redisUrl: url,
    redis,
    registry,
    client,
    entityLanes: new KeyedLanes(redis, prefix, KEYED_SPACES.entities, true),
    async startWorkers(settings = {}) {
      const keyed = await startKeyedWorkers({
        pool,
        redis,
        prefix,
        entities: registry,
        workflows: new WorkflowRegistry([]),
        starter: { enqueue: async () => undefined },
        logger,
        settings: { ...FAST_KEYED, ...settings },
      });
      started.push(keyed);
      return keyed;
    },
    async close() {
      for (const keyed of started) await keyed.stop().catch(() => undefined);
      await client.close();
      redis.disconnect();
      await pool.end().catch(() => undefined);
      await stores.drop();
    },
  };
}

/** Polls `probe` every 25 ms until it returns a value other than false; fails naming `what`. */
export function until<T>(what: string, probe: () => Promise<T | false>, timeoutMs = 20_000): Promise<T> {
  return waitUntil(what, probe, { timeoutMs, intervalMs: 25 });
}
