import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startTestKit, type TestKit, type TestKitOptions, type TestRun } from "../../src/testing/index.js";
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

/** Where the repository keeps recorded histories of its own flows, replayed by `npm test`. */
export const HISTORY_FIXTURES = fileURLToPath(new URL("../fixtures/histories/", import.meta.url));

/**
 * With `TENOR_RECORD_HISTORIES=1`, writes `run`'s recorded history to
 * test/fixtures/histories/<name>.json (how those fixtures were made: by really running the flows).
 * Otherwise does nothing, so an ordinary run never rewrites a fixture.
 */
export async function recordHistoryFixture(name: string, run: TestRun<unknown>): Promise<void> {
  if (process.env.TENOR_RECORD_HISTORIES !== "1") return;
  writeFileSync(`${HISTORY_FIXTURES}${name}.json`, `${JSON.stringify(await run.history(), null, 2)}\n`);
}
