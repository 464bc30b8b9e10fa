import { Redis } from "ioredis";
import { createTestDatabase, type TestDatabase } from "./database.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "./redis.js";

/**
 * What one test file stores its state in: a migrated database and a Redis prefix of its own, and
 * the environment a role process reads to use them. Every world and harness starts from this.
 */
export interface TestStores {
  db: TestDatabase;
  prefix: string;
  /** The Redis server the prefix lives on. */
  redisUrl: string;
  /** DATABASE_URL, REDIS_URL and TENOR_REDIS_PREFIX, as a role process reads them. */
  env: { DATABASE_URL: string; REDIS_URL: string; TENOR_REDIS_PREFIX: string };
  /**
   * Deletes the prefix's keys (through a short-lived connection of its own, so the file's own
   * connections may be closed first) and drops the database. A Redis that is gone by then is
   * left as it is. Call last in `afterAll`.
   */
  drop(): Promise<void>;
}

/**
 * Creates the stores of the test file `file` (its `import.meta.url`, which names the prefix).
 * `redisUrl`: a Redis server of the test's own instead of the shared test server.
 */
export async function createTestStores(
  file: string,
  options: { redisUrl?: string } = {},
): Promise<TestStores> {
  const db = await createTestDatabase();
  const prefix = testRedisPrefix(file);
  const url = options.redisUrl ?? redisUrl();
  return {
    db,
    prefix,
    redisUrl: url,
    env: { DATABASE_URL: db.url, REDIS_URL: url, TENOR_REDIS_PREFIX: prefix },
    async drop() {
      await deletePrefix(url, prefix);
      await db.drop();
    },
  };
}

async function deletePrefix(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  // A fault test may have stopped its own Redis: the keys went with it.
  redis.on("error", () => undefined);
  try {
    await deleteRedisPrefix(prefix, redis);
  } catch {
    // see above
  } finally {
    redis.disconnect();
  }
}
