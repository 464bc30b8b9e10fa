import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/observability/logger.js";
import { completedJobRetentionPolicy } from "../../src/retention/queue-retention.js";
import { retentionCutoff, runRetentionPass } from "../../src/retention/retention-pass.js";
import { executionRetentionPolicy } from "../../src/store/retention/execution-retention.js";
import type { RetentionPolicy } from "../../src/store/retention/retention-policy.js";
import { scheduleRunRetentionPolicy } from "../../src/store/retention/schedule-run-retention.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { waitUntil } from "../support/processes.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";

let db: TestDatabase;
const prefix = testRedisPrefix(import.meta.url);
let redis: Redis;
const logger = createLogger({ level: "error" });
const DAY = 86_400_000;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = new Redis(redisUrl(), { maxRetriesPerRequest: null });
});

afterAll(async () => {
  await deleteRedisPrefix(prefix, redis);
  redis.disconnect();
  await db?.drop();
});

/** `count` executions with `status`, finished (or last touched) `ageDays` ago, two journal rows each. */
async function seed(count: number, status: string, ageDays: number, workflow: string): Promise<void> {
  await db.pool.query(
    `WITH made AS (
       INSERT INTO executions (id, workflow, workflow_version, status, input, created_at, updated_at, completed_at)
       SELECT gen_random_uuid(), $1, 1, $2::"ExecutionStatus", '{}', now() - make_interval(days => $3),
              now() - make_interval(days => $3),
              CASE WHEN $2 IN ('completed', 'failed') THEN now() - make_interval(days => $3) END
         FROM generate_series(1, $4)
       RETURNING id
     ), journal AS (
       INSERT INTO journal_entries (execution_id, position, kind, name, state, turn)
       SELECT id, p, 'step', 's' || p, 'ok', 1 FROM made, generate_series(0, 1) AS p
     )
     INSERT INTO signals (execution_id, name, payload) SELECT id, 'go', '{}' FROM made`,
    [workflow, status, ageDays, count],
  );
}

async function countOf(sql: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(sql);
  return rows[0]?.n ?? 0;
}

describe("retention pass", () => {
  it("deletes eligible executions in bounded batches, keeps recent and unfinished ones, reports counts", async () => {
    await seed(1_050, "completed", 40, "old.done");
    await seed(20, "running", 40, "old.running"); // unfinished: never eligible
    await seed(30, "failed", 5, "recent.failed"); // inside the window
    const batches: number[] = [];
    const policy = executionRetentionPolicy(db.pool);
    const observed: RetentionPolicy = {
      name: policy.name,
      async deleteBatch(cutoff, limit) {
        const batch = await policy.deleteBatch(cutoff, limit);
        batches.push(batch.primary);
        return batch;
      },
      remaining: (cutoff) => policy.remaining(cutoff),
    };
    const report = await runRetentionPass({
      policies: [observed],
      cutoff: retentionCutoff(new Date(), 30),
      batchSize: 100,
      logger,
    });
    expect(batches).toEqual([100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 50]);
    expect(report.policies[0]).toMatchObject({
      policy: "executions",
      batches: 11,
      deleted: { executions: 1_050, journal_entries: 2_100, signals: 1_050 },
      remaining: 0,
      failures: 0,
    });
    expect(report).toMatchObject({ deletedTotal: 4_200, remainingTotal: 0, failures: 0 });
    expect(report.durationMs).toBeGreaterThanOrEqual(0);
    expect(await countOf("SELECT count(*)::int AS n FROM executions WHERE workflow = 'old.done'")).toBe(0);
    expect(await countOf("SELECT count(*)::int AS n FROM executions WHERE workflow = 'old.running'")).toBe(
      20,
    );
    expect(await countOf("SELECT count(*)::int AS n FROM executions WHERE workflow = 'recent.failed'")).toBe(
      30,
    );
    expect(
      await countOf(
        "SELECT count(*)::int AS n FROM journal_entries j LEFT JOIN executions e ON e.id = j.execution_id WHERE e.id IS NULL",
      ),
    ).toBe(0);
  });

  it("skips a row another transaction holds (SKIP LOCKED) instead of waiting, and reports it remaining", async () => {
    await seed(5, "completed", 40, "locked.case");
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      const { rows } = await holder.query<{ id: string }>(
        "SELECT id FROM executions WHERE workflow = 'locked.case' LIMIT 1 FOR UPDATE",
      );
      const started = Date.now();
      const report = await runRetentionPass({
        policies: [executionRetentionPolicy(db.pool)],
        cutoff: retentionCutoff(new Date(), 30),
        batchSize: 100,
        logger,
      });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(report.policies[0]).toMatchObject({ deleted: { executions: 4 }, remaining: 1, failures: 0 });
      await holder.query("ROLLBACK");
      const again = await runRetentionPass({
        policies: [executionRetentionPolicy(db.pool)],
        cutoff: retentionCutoff(new Date(), 30),
        batchSize: 100,
        logger,
      });
      expect(again.policies[0]).toMatchObject({ deleted: { executions: 1 }, remaining: 0 });
      expect(rows).toHaveLength(1);
    } finally {
      await holder.end();
    }
  });

  it("counts a failing policy, keeps going with the others, and prunes old schedule runs", async () => {
    await db.pool.query("INSERT INTO schedules (name, cadence_ms) VALUES ('s', 1000)");
    await db.pool.query(
      `INSERT INTO schedule_runs (schedule, window_start, outcome, runner_id, started_at)
       SELECT 's', now() - make_interval(days => d), 'empty', 'r', now() - make_interval(days => d, hours => -1)
         FROM generate_series(1, 40) AS d`,
    );
    const broken: RetentionPolicy = {
      name: "broken",
      deleteBatch: async () => {
        throw new Error("table missing");
      },
      remaining: async () => 7,
    };
    const report = await runRetentionPass({
      policies: [broken, scheduleRunRetentionPolicy(db.pool)],
      cutoff: retentionCutoff(new Date(), 30),
      batchSize: 100,
      logger,
    });
    expect(report.policies[0]).toMatchObject({
      policy: "broken",
      failures: 1,
      errors: ["table missing"],
      remaining: 7,
    });
    expect(report.policies[1]).toMatchObject({
      policy: "schedule-runs",
      deleted: { schedule_runs: 10 },
      remaining: 0,
    });
    expect(report.failures).toBe(1);
    expect(await countOf("SELECT count(*)::int AS n FROM schedule_runs")).toBe(30);
  });

  it("deletes completed queue messages older than the window, in bounded batches", async () => {
    const queue = new Queue("retained", { connection: redis, prefix });
    const worker = new Worker("retained", async () => "ok", {
      connection: redis,
      prefix,
      removeOnComplete: { count: 10_000 },
    });
    await queue.addBulk(Array.from({ length: 25 }, (_, i) => ({ name: "j", data: { i } })));
    await waitUntil("25 completed jobs", async () => (await queue.getCompletedCount()) === 25);
    await worker.close();
    // Age 20 of them past the window: the completed set is scored by finish time.
    const key = `${queue.qualifiedName}:completed`;
    const ids = await redis.zrange(key, 0, 19);
    const old = Date.now() - 40 * DAY;
    for (const id of ids) {
      await redis.zadd(key, old, id);
      await redis.hset(`${queue.qualifiedName}:${id}`, "finishedOn", old);
    }
    const report = await runRetentionPass({
      policies: [completedJobRetentionPolicy(queue, redis)],
      cutoff: retentionCutoff(new Date(), 30),
      batchSize: 10,
      logger,
    });
    expect(report.policies[0]).toMatchObject({
      policy: "queue:retained",
      batches: 3,
      deleted: { "completed jobs (retained)": 20 },
      remaining: 0,
    });
    expect(await queue.getCompletedCount()).toBe(5);
    await queue.close();
  });
});
