import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordSettingOnce } from "../../../src/ownership/store/pg-shard-ownership.js";
import { createTestDatabase, type TestDatabase } from "../../support/database.js";
import { waitUntil } from "../../support/processes.js";

/**
 * Two roles starting on a fresh database both record the shard count: the second must read the
 * first's value even when its insert waited on the first's uncommitted row.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe("recordSettingOnce", () => {
  it("returns the first writer's value when its row committed while this insert waited on it", async () => {
    const first = new pg.Client({ connectionString: db.url });
    await first.connect();
    try {
      await first.query("BEGIN");
      await first.query("INSERT INTO engine_settings (key, value) VALUES ('race.count', to_jsonb(16))");
      // The second writer's INSERT blocks on the uncommitted row (its statement snapshot predates it).
      const second = recordSettingOnce(db.pool, "race.count", 32);
      await waitUntil(
        "the second insert waiting on the first's row",
        async () =>
          (
            await db.pool.query(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%engine_settings%'",
            )
          ).rows[0].n > 0,
      );
      await first.query("COMMIT");
      expect(await second).toBe(16);
    } finally {
      await first.end();
    }
  });

  it("records the value when nobody has, and returns the recorded one afterwards", async () => {
    expect(await recordSettingOnce(db.pool, "fresh.count", 8)).toBe(8);
    expect(await recordSettingOnce(db.pool, "fresh.count", 9)).toBe(8);
  });
});
