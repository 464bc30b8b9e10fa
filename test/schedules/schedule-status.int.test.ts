import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/observability/logger.js";
import type { ScheduleDefinition } from "../../src/schedules/schedule-definition.js";
import { registerSchedules } from "../../src/schedules/schedule-service.js";
import { readScheduleStatuses } from "../../src/schedules/schedule-status.js";
import { runScheduleTick } from "../../src/schedules/schedule-tick.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

/**
 * The schedule run table tells apart what a bare "no rows" cannot: a run that found nothing, a
 * schedule that is late, one that stopped reporting, one that fails, and one not yet due.
 */

let db: TestDatabase;
const logger = createLogger({ level: "error" });

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

const every = (name: string, run: ScheduleDefinition["run"]): ScheduleDefinition => ({
  name,
  cadence: { kind: "every", everyMs: 60_000 },
  run,
});

/** Moves a schedule's last attempt (and registration) `ms` into the past. */
async function age(name: string, ms: number): Promise<void> {
  await db.pool.query(
    `UPDATE schedules SET last_attempt_at = now() - make_interval(secs => $2::float / 1000),
                          registered_at = now() - make_interval(secs => $2::float / 1000)
      WHERE name = $1`,
    [name, ms],
  );
}

describe("schedule status", () => {
  it("distinguishes a zero-result run, overdue, stopped, failing and pending", async () => {
    const deps = { pool: db.pool, logger, runnerId: "status" };
    const definitions = [
      every("found-nothing", async () => ({ outcome: "empty", summary: { examined: 0 } })),
      every("found-work", async () => ({ outcome: "succeeded", summary: { examined: 3 } })),
      every("late", async () => ({ outcome: "empty", summary: {} })),
      every("silent", async () => ({ outcome: "succeeded", summary: {} })),
      every("broken", async () => {
        throw new Error("rpc unreachable");
      }),
      every("new", async () => ({ outcome: "empty", summary: {} })),
    ];
    await registerSchedules(db.pool, definitions);
    const now = new Date();
    for (const definition of definitions.filter((d) => d.name !== "new"))
      await runScheduleTick(deps, definition, now);
    await age("late", 150_000); // due 90 s ago: late by more than one cadence
    await age("silent", 600_000); // due 9 min ago: more than four cadences and 5 min
    const statuses = Object.fromEntries((await readScheduleStatuses(db.pool)).map((s) => [s.name, s]));

    expect(statuses["found-nothing"]).toMatchObject({ state: "ok", lastOutcome: "empty", lateByMs: 0 });
    expect(statuses["found-nothing"]?.lastSuccessAt).toBeInstanceOf(Date);
    expect(statuses["found-work"]).toMatchObject({ state: "ok", lastOutcome: "succeeded" });
    expect(statuses.late).toMatchObject({ state: "overdue", lastOutcome: "empty" });
    expect(statuses.silent).toMatchObject({ state: "stopped" });
    expect(statuses.broken).toMatchObject({
      state: "failing",
      lastOutcome: "failed",
      lastError: "rpc unreachable",
      consecutiveFailures: 1,
      lastSuccessAt: null,
    });
    expect(statuses.new).toMatchObject({ state: "pending", lastAttemptAt: null });

    const { rows } = await db.pool.query(
      "SELECT schedule, attempt, outcome, duration_ms IS NOT NULL AS timed FROM schedule_runs WHERE schedule = 'found-nothing'",
    );
    expect(rows).toEqual([{ schedule: "found-nothing", attempt: 1, outcome: "empty", timed: true }]);
  });
});
