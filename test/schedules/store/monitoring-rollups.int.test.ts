import { randomUUID } from "node:crypto";
import { PassThrough } from "node:stream";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../src/observability/logger.js";
import { rebuildRollups } from "../../../src/schedules/store/pg-monitoring-rollups.js";
import { createTestDatabase, type TestDatabase } from "../../support/database.js";
import { waitUntil } from "../../support/processes.js";

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

const HOUR = 3_600_000;

function capture() {
  const stream = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  stream.on("data", (chunk: Buffer) => {
    for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line));
  });
  return { logger: createLogger({ level: "info", stream }), lines };
}

async function finished(workflow: string, status: "completed" | "failed", at: Date): Promise<void> {
  await db.pool.query(
    `INSERT INTO executions (id, workflow, workflow_version, status, input, created_at, updated_at, completed_at)
     VALUES ($1, $2, 1, $3, '{}', $4, $4, $4)`,
    [randomUUID(), workflow, status, at],
  );
}

describe("monitoring rollups", () => {
  it("after 30 hours of downtime one cycle rebuilds 24 buckets, logs capped and 6 gap hours remaining", async () => {
    const now = new Date(Math.floor(Date.now() / HOUR) * HOUR + 30 * 60_000); // hh:30
    const currentHour = now.getTime() - 30 * 60_000;
    // Built before the downtime: the 10 hours ending 31 hours ago.
    for (let h = 40; h >= 31; h--)
      await db.pool.query("INSERT INTO rollup_hours (hour, executions) VALUES ($1, 0)", [
        new Date(currentHour - h * HOUR),
      ]);
    // Outcomes during the gap (hours currentHour-30h .. currentHour-1h).
    const twoHoursAgo = new Date(currentHour - 2 * HOUR + 10 * 60_000);
    await finished("asset.create", "completed", twoHoursAgo);
    await finished("asset.create", "completed", twoHoursAgo);
    await finished("asset.create", "failed", twoHoursAgo);
    await finished("wallet.provision", "completed", new Date(currentHour - 29 * HOUR + 60_000));
    await finished("asset.create", "completed", new Date(now.getTime() - 60_000)); // current hour: not yet

    const first = capture();
    const cycle1 = await rebuildRollups({ pool: db.pool, logger: first.logger, retentionDays: 30, now });
    expect(cycle1.rebuilt).toHaveLength(24);
    expect(cycle1.rebuilt[0]).toBe(new Date(currentHour - HOUR).toISOString());
    expect(cycle1).toMatchObject({ capped: true, gapHoursRemaining: 6 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(first.lines).toContainEqual(
      expect.objectContaining({ level: "warn", capped: true, gapHoursRemaining: 6, rebuilt: 24 }),
    );
    const { rows } = await db.pool.query(
      "SELECT workflow, completed, failed FROM execution_rollups WHERE hour = $1",
      [new Date(currentHour - 2 * HOUR)],
    );
    expect(rows).toEqual([{ workflow: "asset.create", completed: 2, failed: 1 }]);

    const second = capture();
    const cycle2 = await rebuildRollups({ pool: db.pool, logger: second.logger, retentionDays: 30, now });
    expect(cycle2).toMatchObject({ capped: false, gapHoursRemaining: 0 });
    expect(cycle2.rebuilt).toHaveLength(6);
    const { rows: oldest } = await db.pool.query(
      "SELECT workflow, completed, failed FROM execution_rollups WHERE hour = $1",
      [new Date(currentHour - 29 * HOUR)],
    );
    expect(oldest).toEqual([{ workflow: "wallet.provision", completed: 1, failed: 0 }]);
    const third = await rebuildRollups({ pool: db.pool, logger: second.logger, retentionDays: 30, now });
    expect(third).toEqual({ rebuilt: [], capped: false, gapHoursRemaining: 0 });
  });
});

describe("a rollup cycle whose connection dies", () => {
  it("rejects, without an uncaught 'error', when the backend building an hour is terminated", async () => {
    const builder = "tenor-test-rollups";
    const pool = new pg.Pool({ connectionString: db.url, max: 1, application_name: builder });
    const blocker = await db.pool.connect();
    try {
      // The hour's DELETE waits on this lock, so its backend is mid-transaction when killed.
      await blocker.query("BEGIN");
      await blocker.query("LOCK TABLE execution_rollups IN ACCESS EXCLUSIVE MODE");
      const now = new Date(Date.now() + 400 * 24 * HOUR); // past every hour built above
      const cycle = rebuildRollups({ pool, logger: capture().logger, retentionDays: 1, now }).then(
        () => "resolved",
        (error: Error) => error,
      );
      const pid = await waitUntil("the hour's build waiting on the lock", async () => {
        const { rows } = await db.pool.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = $1 AND wait_event_type = 'Lock'`,
          [builder],
        );
        return rows[0]?.pid;
      });
      await db.pool.query("SELECT pg_terminate_backend($1)", [pid]);
      expect(await cycle).toBeInstanceOf(Error);
    } finally {
      await blocker.query("ROLLBACK");
      blocker.release();
      await pool.end();
    }
  });
});
