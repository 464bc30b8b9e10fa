import { randomBytes } from "node:crypto";
import { basename } from "node:path";
import { Redis } from "ioredis";

/** Redis used when TEST_REDIS_URL is unset: the local test machine's. Tests only. */
const DEFAULT_TEST_REDIS_URL = "redis://127.0.0.1:6379";

/** Keys fetched per SCAN round trip by {@link deleteRedisPrefix}. */
const SCAN_COUNT = 500;

/** URL of the Redis server integration tests use: TEST_REDIS_URL, else redis://127.0.0.1:6379. */
export function redisUrl(): string {
  return process.env.TEST_REDIS_URL ?? DEFAULT_TEST_REDIS_URL;
}

/**
 * A BullMQ `prefix` no other test file or run shares: `t:<name>:<random hex>`. Pass the test
 * file's name or `import.meta.url`; it is reduced to its base name without extensions.
 * Characters Redis's MATCH treats as patterns (`*?[]\`) and `:` are replaced, so
 * {@link deleteRedisPrefix} removes exactly this prefix's keys.
 */
export function testRedisPrefix(name: string): string {
  const file = basename(name).replace(/\..*$/, "");
  const safe = file.replace(/[^A-Za-z0-9_-]/g, "_") || "test";
  return `t:${safe}:${randomBytes(4).toString("hex")}`;
}

/**
 * Deletes every key under `prefix` (`<prefix>:*`, as BullMQ names them) with SCAN and UNLINK,
 * never FLUSHDB/FLUSHALL, so concurrent test files and other users of the server are untouched.
 * Call in `afterAll`.
 *
 * @param prefix - a prefix from {@link testRedisPrefix}.
 * @param redis - client to use; default: a short-lived one to {@link redisUrl}.
 * @returns the number of keys deleted.
 */
export async function deleteRedisPrefix(prefix: string, redis?: Redis): Promise<number> {
  if (prefix.length === 0 || /[*?[\]\\]/.test(prefix)) {
    throw new Error(`Refusing to delete Redis keys under the pattern-like prefix ${JSON.stringify(prefix)}.`);
  }
  const client = redis ?? new Redis(redisUrl(), { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    let deleted = 0;
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", SCAN_COUNT);
      if (keys.length > 0) deleted += await client.unlink(...keys);
      cursor = next;
    } while (cursor !== "0");
    return deleted;
  } finally {
    if (!redis) client.disconnect();
  }
}
