import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countPendingWebhookDeliveries } from "../../src/store/pg-metrics-queries.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { waitUntil } from "../support/processes.js";

/**
 * A scrape's connection dies under it (failover, pg_terminate_backend): the scrape fails, the
 * process does not. A checked-out client has no pool listener, so without its own 'error'
 * listener the connection's death would be an uncaught 'error' event.
 */

const SCRAPER = "tenor-test-scraper";

let db: TestDatabase;
let scrapes: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  scrapes = new pg.Pool({ connectionString: db.url, max: 1, application_name: SCRAPER });
});

afterAll(async () => {
  await scrapes?.end();
  await db?.drop();
});

describe("metrics scrape reads", () => {
  it("reject, without an uncaught 'error', when their connection is terminated mid-read", async () => {
    const blocker = await db.pool.connect();
    try {
      // The scrape's count waits on this lock, so its backend is still mid-statement when killed.
      await blocker.query("BEGIN");
      await blocker.query("LOCK TABLE webhook_deliveries IN ACCESS EXCLUSIVE MODE");
      const scrape = countPendingWebhookDeliveries(scrapes);
      const settled = scrape.then(
        () => "resolved",
        (error: Error) => error,
      );
      const pid = await waitUntil("the scrape waiting on the lock", async () => {
        const { rows } = await db.pool.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = $1 AND wait_event_type = 'Lock'`,
          [SCRAPER],
        );
        return rows[0]?.pid;
      });
      await db.pool.query("SELECT pg_terminate_backend($1)", [pid]);
      expect(await settled).toBeInstanceOf(Error);
    } finally {
      await blocker.query("ROLLBACK");
      blocker.release();
    }
    // The dead connection left the pool: the next scrape gets a fresh one and reads.
    await expect(countPendingWebhookDeliveries(scrapes)).resolves.toBe(0);
  });
});
