import { startTestKit, type TestKit, type TestKitOptions } from "../../src/testing/index.js";
import { createTestDatabase } from "./database.js";
import { redisUrl, testRedisPrefix } from "./redis.js";

/**
 * The authors' test kit (src/testing) on a database and Redis prefix of the test file's own, as
 * every integration test here runs: the database is cloned from the run's migrated template and
 * dropped again by `stop()`.
 */
export async function startFileTestKit(
  file: string,
  options: Omit<TestKitOptions, "databaseUrl" | "redisUrl" | "redisPrefix" | "migrate">,
): Promise<{ kit: TestKit; stop(): Promise<void> }> {
  const db = await createTestDatabase();
  const kit = await startTestKit({
    ...options,
    databaseUrl: db.url,
    redisUrl: redisUrl(),
    redisPrefix: testRedisPrefix(file),
  });
  return {
    kit,
    async stop() {
      await kit.stop();
      await db.drop();
    },
  };
}
