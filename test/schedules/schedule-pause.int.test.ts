import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/observability/logger.js";
import { scheduleControl } from "../../src/schedules/schedule-control.js";
import type { ScheduleDefinition } from "../../src/schedules/schedule-definition.js";
import { registerSchedules, startScheduleService } from "../../src/schedules/schedule-service.js";
import { runScheduleTick } from "../../src/schedules/schedule-tick.js";
import { type ScheduleJobData, upsertJobSchedulers } from "../../src/schedules/scheduler-upsert.js";
import { pauseSchedule, resumeSchedule } from "../../src/schedules/store/pg-schedule-control.js";
import { QUEUE_NAMES } from "../../src/transport/queue-names.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { waitUntil } from "../support/processes.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";

/**
 * Pause, resume and trigger below the API (docs/schedules.md, "Pause, resume, trigger"): a paused
 * schedule's tick claims and records nothing, runners keep no job scheduler for it and restore it
 * on resume, and a trigger runs a finished window again but never one that is running.
 */

let db: TestDatabase;
const prefix = testRedisPrefix(import.meta.url);
const connections: Redis[] = [];
const logger = createLogger({ level: "error" });
const ops = { subject: "ops@platform", keyId: "00000000-0000-4000-8000-000000000001" };

beforeAll(async () => {
  db = await createTestDatabase();
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

function counting(
  name: string,
  everyMs: number,
  counter: { runs: number },
  gate?: Promise<void>,
): ScheduleDefinition {
  return {
    name,
    cadence: { kind: "every", everyMs },
    async run() {
      counter.runs++;
      await gate;
      return { outcome: "succeeded", summary: {} };
    },
  };
}

async function runsOf(schedule: string) {
  const { rows } = await db.pool.query<{ attempt: number; outcome: string; triggered_by: string | null }>(
    "SELECT attempt, outcome::text AS outcome, triggered_by FROM schedule_runs WHERE schedule = $1 ORDER BY window_start",
    [schedule],
  );
  return rows;
}

describe("a paused schedule", () => {
  it("ticks without running or recording anything, its status reads paused, and runs again once resumed", async () => {
    const counter = { runs: 0 };
    const schedule = counting("paused-tick", 60_000, counter);
    await registerSchedules(db.pool, [schedule]);
    expect(await pauseSchedule(db.pool, schedule.name, ops)).toEqual({ found: true, changed: true });
    // A second pause keeps the first one's time and person.
    expect(await pauseSchedule(db.pool, schedule.name, { ...ops, subject: "someone-else" })).toEqual({
      found: true,
      changed: false,
    });
    const deps = { pool: db.pool, logger, runnerId: "r" };
    const firedAt = new Date("2026-01-01T10:00:00.000Z");
    expect(await runScheduleTick(deps, schedule, firedAt)).toBe("skipped");
    expect(await runScheduleTick(deps, schedule, firedAt, { by: "ops@platform" })).toBe("skipped");
    expect(counter.runs).toBe(0);
    expect(await runsOf(schedule.name)).toEqual([]);
    const { rows } = await db.pool.query(
      "SELECT last_attempt_at, paused_by, paused_at IS NOT NULL AS paused FROM schedules WHERE name = $1",
      [schedule.name],
    );
    expect(rows[0]).toEqual({ last_attempt_at: null, paused_by: "ops@platform", paused: true });
    // Registering it again (a runner starting) leaves it paused.
    await registerSchedules(db.pool, [schedule]);
    const control = scheduleControl({ pool: db.pool, redis: connect(), prefix: `${prefix}:status` });
    const view = (await control.list()).find((s) => s.name === schedule.name);
    expect(view).toMatchObject({ state: "paused", pausedBy: "ops@platform", nextRunAt: null, lateByMs: 0 });
    expect(await control.trigger(schedule.name, ops)).toMatchObject({ kind: "paused" });
    await control.close();

    expect(await resumeSchedule(db.pool, schedule.name)).toEqual({ found: true, changed: true });
    expect(await resumeSchedule(db.pool, schedule.name)).toEqual({ found: true, changed: false });
    expect(await resumeSchedule(db.pool, "no-such-schedule")).toEqual({ found: false });
    expect(await runScheduleTick(deps, schedule, firedAt)).toBe("succeeded");
    expect(counter.runs).toBe(1);
  });
});

describe("a trigger", () => {
  it("runs a finished window again as the next attempt, recording who asked; never a running one", async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const counter = { runs: 0 };
    const schedule = counting("triggered", 60_000, counter);
    await registerSchedules(db.pool, [schedule]);
    const deps = { pool: db.pool, logger, runnerId: "r", leaseMs: 5_000 };
    const firedAt = new Date("2026-01-01T10:00:00.000Z");
    expect(await runScheduleTick(deps, schedule, firedAt)).toBe("succeeded");
    // A scheduled tick of a finished window does nothing; a trigger runs it again.
    expect(await runScheduleTick(deps, schedule, firedAt)).toBe("skipped");
    expect(await runScheduleTick(deps, schedule, new Date(firedAt.getTime() + 10_000), { by: "ops" })).toBe(
      "succeeded",
    );
    expect(await runsOf(schedule.name)).toEqual([{ attempt: 2, outcome: "succeeded", triggered_by: "ops" }]);

    // While a run of the window holds its lease, a trigger of that window does not start it again.
    const slow = counting("slow", 60_000, counter, gate);
    await registerSchedules(db.pool, [slow]);
    const running = runScheduleTick(deps, slow, firedAt);
    await waitUntil("the slow run started", async () => (await runsOf(slow.name))[0]?.outcome === "running");
    expect(await runScheduleTick(deps, slow, firedAt, { by: "ops" })).toBe("skipped");
    const control = scheduleControl({ pool: db.pool, redis: connect(), prefix: `${prefix}:running` });
    expect(await control.trigger(slow.name, ops)).toMatchObject({ kind: "running", run: { attempt: 1 } });
    release();
    expect(await running).toBe("succeeded");
    expect(await runsOf(slow.name)).toEqual([{ attempt: 1, outcome: "succeeded", triggered_by: null }]);
    expect(await control.trigger("no-such-schedule", ops)).toEqual({ kind: "not-found" });
    await control.close();
  });

  it("is a job on the schedules queue that a runner's schedule service runs for the window of its time", async () => {
    const p = `${prefix}:queue`;
    const counter = { runs: 0 };
    const daily: ScheduleDefinition = {
      name: "nightly-job",
      cadence: { kind: "cron", pattern: "17 3 * * *", tz: "UTC", periodMs: 86_400_000 },
      async run() {
        counter.runs++;
        return { outcome: "empty", summary: {} };
      },
    };
    const service = await startScheduleService({
      definitions: [daily],
      pool: db.pool,
      redis: connect(),
      workerRedis: connect(true),
      prefix: p,
      logger,
      runnerId: "runner-a",
      lockDurationMs: 2_000,
      stalledIntervalMs: 1_000,
    });
    const control = scheduleControl({ pool: db.pool, redis: connect(), prefix: p });
    const queued = await control.trigger(daily.name, ops);
    expect(queued.kind).toBe("queued");
    await waitUntil("the triggered run", async () => (await runsOf(daily.name)).length === 1);
    const [run] = await runsOf(daily.name);
    expect(run).toEqual({ attempt: 1, outcome: "empty", triggered_by: "ops@platform" });
    const { rows } = await db.pool.query<{ window_start: Date }>(
      "SELECT window_start FROM schedule_runs WHERE schedule = $1",
      [daily.name],
    );
    if (queued.kind !== "queued") throw new Error("not queued");
    expect(rows[0]?.window_start.toISOString()).toBe(queued.window.toISOString());
    // The next run the view shows is the job scheduler's own.
    const scheduler = await service.queue.getJobScheduler(daily.name);
    const view = (await control.list()).find((s) => s.name === daily.name);
    expect(view?.nextRunSource).toBe("scheduler");
    expect(view?.nextRunAt?.getTime()).toBe(scheduler?.next);
    expect(view?.cadenceText).toBe("daily at 03:17 UTC");
    await control.close();
    await service.stop();
  });
});

describe("job schedulers of paused schedules", () => {
  it("are removed and not re-created by a booting runner, and the keeper restores them on resume", async () => {
    const p = `${prefix}:keeper`;
    const counter = { runs: 0 };
    const definitions = [counting("kept", 60_000, counter), counting("stilled", 60_000, counter)];
    await registerSchedules(db.pool, definitions);
    const queue = new Queue<ScheduleJobData>(QUEUE_NAMES.schedules, { connection: connect(), prefix: p });
    await upsertJobSchedulers({ queue, redis: connect(), definitions, logger, removeUnknown: true });
    expect((await queue.getJobSchedulers(0, -1)).map((s) => s.key).sort()).toEqual(["kept", "stilled"]);
    await pauseSchedule(db.pool, "stilled", ops);
    const service = await startScheduleService({
      definitions,
      pool: db.pool,
      redis: connect(),
      workerRedis: connect(true),
      prefix: p,
      logger,
      runnerId: "booting",
      lockDurationMs: 2_000,
      stalledIntervalMs: 1_000,
      keeperIntervalMs: 100,
    });
    // The boot's own upsert removed it: nothing is left to re-create or fire.
    expect((await queue.getJobSchedulers(0, -1)).map((s) => s.key)).toEqual(["kept"]);
    await resumeSchedule(db.pool, "stilled");
    await waitUntil("the keeper restored the resumed scheduler", async () =>
      Boolean(await queue.getJobScheduler("stilled")),
    );
    await pauseSchedule(db.pool, "kept", ops);
    await waitUntil(
      "the keeper removed the paused scheduler",
      async () => !(await queue.getJobScheduler("kept")),
    );
    await service.stop();
    await queue.close();
  });
});
