import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgLedgerReads } from "../../src/ledger-index/store/reads.js";
import { createLogger } from "../../src/observability/logger.js";
import { blockchainHealthSchedule } from "../../src/schedules/blockchain-health-collector.js";
import type { ScheduleDefinition } from "../../src/schedules/schedule-definition.js";
import {
  registerSchedules,
  type ScheduleService,
  startScheduleService,
} from "../../src/schedules/schedule-service.js";
import { runScheduleTick } from "../../src/schedules/schedule-tick.js";
import { type ScheduleJobData, upsertJobSchedulers } from "../../src/schedules/scheduler-upsert.js";
import { QUEUE_NAMES } from "../../src/transport/queue-names.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { waitUntil } from "../support/processes.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";

let db: TestDatabase;
const prefix = testRedisPrefix(import.meta.url);
const connections: Redis[] = [];
const logger = createLogger({ level: "error" });

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query("CREATE TABLE tick_work (schedule text, window_start timestamptz, pid text)");
});

afterAll(async () => {
  await deleteRedisPrefix(prefix);
  for (const c of connections) c.disconnect();
  await db?.drop();
});

function connect(worker = false): Redis {
  const redis = new Redis(redisUrl(), { maxRetriesPerRequest: worker ? null : 3 });
  connections.push(redis);
  return redis;
}

/** A schedule whose work leaves one row per run, so a window that ran twice shows twice. */
function recording(name: string, everyMs: number, runner: string): ScheduleDefinition {
  return {
    name,
    cadence: { kind: "every", everyMs },
    async run({ window }) {
      await db.pool.query("INSERT INTO tick_work VALUES ($1, $2, $3)", [name, window, runner]);
      return { outcome: "succeeded", summary: { runner } };
    },
  };
}

describe("job schedulers", () => {
  it("concurrent boots upsert exactly one job scheduler per schedule, and drop unknown ones", async () => {
    const p = `${prefix}:boot`;
    const definitions: ScheduleDefinition[] = [
      recording("every-minute", 60_000, "x"),
      {
        name: "nightly",
        cadence: { kind: "cron", pattern: "17 3 * * *", tz: "UTC", periodMs: 86_400_000 },
        run: async () => ({ outcome: "empty", summary: {} }),
      },
    ];
    const seed = new Queue<ScheduleJobData>(QUEUE_NAMES.schedules, { connection: connect(), prefix: p });
    await seed.upsertJobScheduler("removed-from-code", { every: 30_000 }, { name: "removed-from-code" });
    const boots = Array.from({ length: 6 }, () => {
      const queue = new Queue<ScheduleJobData>(QUEUE_NAMES.schedules, { connection: connect(), prefix: p });
      return { queue, redis: connect() };
    });
    const reports = await Promise.all(
      boots.map(({ queue, redis }) =>
        upsertJobSchedulers({ queue, redis, definitions, logger, removeUnknown: true }),
      ),
    );
    // One boot did the work under the lock; the others found it done.
    expect(reports.flatMap((r) => r.created).sort()).toEqual(["every-minute", "nightly"]);
    expect(reports.flatMap((r) => r.removed)).toEqual(["removed-from-code"]);
    const schedulers = await seed.getJobSchedulers(0, -1);
    expect(schedulers.map((s) => s.key).sort()).toEqual(["every-minute", "nightly"]);
    const pending = [...(await seed.getDelayed()), ...(await seed.getWaiting())];
    for (const name of ["every-minute", "nightly"])
      expect(
        pending.filter((job) => job.name === name),
        `next jobs of ${name}`,
      ).toHaveLength(1);
    await Promise.all([seed.close(), ...boots.map((b) => b.queue.close())]);
  });
});

describe("schedule ticks", () => {
  it("two runners running the same schedules run each window exactly once", async () => {
    const p = `${prefix}:run`;
    const start = (runner: string) =>
      startScheduleService({
        definitions: [recording("fast", 250, runner)],
        pool: db.pool,
        redis: connect(),
        workerRedis: connect(true),
        prefix: p,
        logger,
        runnerId: runner,
        lockDurationMs: 2_000,
        stalledIntervalMs: 1_000,
      });
    const services: ScheduleService[] = await Promise.all([start("r1"), start("r2")]);
    await waitUntil("eight windows of fast", async () => {
      const { rows } = await db.pool.query<{ n: number }>(
        "SELECT count(DISTINCT window_start)::int AS n FROM tick_work WHERE schedule = 'fast'",
      );
      return (rows[0]?.n ?? 0) >= 8;
    });
    await Promise.all(services.map((s) => s.stop()));
    const { rows: twice } = await db.pool.query(
      "SELECT window_start, count(*) FROM tick_work WHERE schedule = 'fast' GROUP BY 1 HAVING count(*) > 1",
    );
    expect(twice).toEqual([]);
    const { rows: runs } = await db.pool.query<{ n: number; ok: number }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE outcome = 'succeeded' AND attempt = 1)::int AS ok
         FROM schedule_runs WHERE schedule = 'fast'`,
    );
    const { rows: work } = await db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM tick_work WHERE schedule = 'fast'",
    );
    expect(runs[0]?.n).toBe(work[0]?.n);
    expect(runs[0]?.ok).toBe(runs[0]?.n);
  });

  it("a duplicate tick for the same window does not run the work twice; a failed window is retried", async () => {
    const deps = { pool: db.pool, logger, runnerId: "dup" };
    const schedule = recording("dup", 60_000, "dup");
    await registerSchedules(db.pool, [schedule]);
    const firedAt = new Date("2026-01-01T10:00:00.000Z");
    const outcomes = await Promise.all([
      runScheduleTick(deps, schedule, firedAt),
      runScheduleTick(deps, schedule, new Date(firedAt.getTime() + 30_000)), // same minute window
    ]);
    expect(outcomes.sort()).toEqual(["skipped", "succeeded"]);
    expect(await runScheduleTick(deps, schedule, firedAt)).toBe("skipped");
    const { rows } = await db.pool.query("SELECT 1 FROM tick_work WHERE schedule = 'dup'");
    expect(rows).toHaveLength(1);

    let calls = 0;
    const flaky: ScheduleDefinition = {
      name: "flaky",
      cadence: { kind: "every", everyMs: 60_000 },
      async run() {
        calls++;
        if (calls === 1) throw new Error("provider down");
        return { outcome: "succeeded", summary: {} };
      },
    };
    await registerSchedules(db.pool, [flaky]);
    expect(await runScheduleTick(deps, flaky, firedAt)).toBe("failed");
    expect(await runScheduleTick(deps, flaky, firedAt)).toBe("succeeded");
    expect(await runScheduleTick(deps, flaky, firedAt)).toBe("skipped");
    const { rows: run } = await db.pool.query(
      "SELECT attempt, outcome FROM schedule_runs WHERE schedule = 'flaky'",
    );
    expect(run).toEqual([{ attempt: 2, outcome: "succeeded" }]);
  });

  it("the blockchain health collector records the Ledger Index's health per chain (empty while none is indexed)", async () => {
    const deps = { pool: db.pool, logger, runnerId: "health" };
    const health = blockchainHealthSchedule(15, () => new PgLedgerReads(db.pool).health());
    await registerSchedules(db.pool, [health]);
    const firstWindow = new Date(Date.UTC(2026, 0, 1, 0, 0, 0));
    expect(await runScheduleTick(deps, health, firstWindow)).toBe("empty");
    await db.pool.query(
      `INSERT INTO ledger_chains (chain_id, indexed_height, indexed_hash, indexed_block_time, head_height, head_block_time, last_reorg_depth)
       VALUES (31337, 90, '0xaa', '2026-01-01T00:00:00Z', 100, '2026-01-01T00:00:20Z', 3)`,
    );
    expect(await runScheduleTick(deps, health, new Date(firstWindow.getTime() + 15_000))).toBe("succeeded");
    const { rows } = await db.pool.query(
      "SELECT outcome, result FROM schedule_runs WHERE schedule = 'blockchain-health' ORDER BY window_start",
    );
    expect(rows).toEqual([
      { outcome: "empty", result: { chains: 0, note: "no chains indexed" } },
      {
        outcome: "succeeded",
        result: {
          chains: 1,
          maxLagBlocks: 10,
          perChain: [
            {
              chainId: 31337,
              headHeight: "100",
              indexedHeight: "90",
              lagBlocks: 10,
              lagSeconds: 20,
              lastReorgDepth: 3,
              openRanges: 0,
            },
          ],
        },
      },
    ]);
  });
});
