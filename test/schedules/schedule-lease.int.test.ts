import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/observability/logger.js";
import type { ScheduleDefinition } from "../../src/schedules/schedule-definition.js";
import { registerSchedules } from "../../src/schedules/schedule-service.js";
import { runScheduleTick } from "../../src/schedules/schedule-tick.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { waitUntil } from "../support/processes.js";

/**
 * A window's claim carries a lease (docs/schedules.md, "Leases"): a run renews it while it works;
 * a run whose runner crashed leaves it to expire, and the window is claimed again, by the
 * re-delivered tick or by the schedule's next tick. A stale holder cannot record its outcome.
 */

let db: TestDatabase;
const logger = createLogger({ level: "error" });
const LEASE_MS = 300;
/**
 * The live run's lease. Its holder and the challenging tick share this test process, so a stall
 * of this process longer than two thirds of the lease (a loaded CI machine) would let the lease
 * lapse between a renewal and the challenge, as it would for a frozen runner: 1 s leaves the
 * renewal a margin of about 650 ms.
 */
const LIVE_LEASE_MS = 1_000;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

function counting(name: string, counter: { runs: number }, gate?: Promise<void>): ScheduleDefinition {
  return {
    name,
    cadence: { kind: "every", everyMs: 60_000 },
    async run() {
      counter.runs++;
      await gate;
      return { outcome: "succeeded", summary: {} };
    },
  };
}

/** Leaves the window `running` as a runner killed mid-run does, its lease already expired. */
async function crashedRun(schedule: string, window: Date): Promise<void> {
  await db.pool.query(
    `INSERT INTO schedule_runs (schedule, window_start, attempt, outcome, runner_id, started_at, lease_until)
     VALUES ($1, $2, 1, 'running', 'dead-runner', now() - interval '1 hour', now() - interval '1 minute')`,
    [schedule, window],
  );
}

async function runOf(schedule: string, window: Date) {
  const { rows } = await db.pool.query<{ attempt: number; outcome: string; runner_id: string }>(
    "SELECT attempt, outcome::text AS outcome, runner_id FROM schedule_runs WHERE schedule = $1 AND window_start = $2",
    [schedule, window],
  );
  return rows[0];
}

describe("schedule window leases", () => {
  it("a window left running by a crashed runner is claimed again once its lease expired", async () => {
    const counter = { runs: 0 };
    const schedule = counting("crashed", counter);
    await registerSchedules(db.pool, [schedule]);
    const window = new Date("2026-01-01T10:00:00.000Z");
    await crashedRun(schedule.name, window);
    const deps = { pool: db.pool, logger, runnerId: "r2", leaseMs: LEASE_MS };
    expect(await runScheduleTick(deps, schedule, window)).toBe("succeeded");
    expect(counter.runs).toBe(1);
    expect(await runOf(schedule.name, window)).toEqual({ attempt: 2, outcome: "succeeded", runner_id: "r2" });
  });

  it("the schedule's next tick also reclaims an earlier window whose lease expired", async () => {
    const counter = { runs: 0 };
    const schedule = counting("catch-up", counter);
    await registerSchedules(db.pool, [schedule]);
    const yesterday = new Date("2026-01-01T03:00:00.000Z");
    const today = new Date("2026-01-02T03:00:00.000Z");
    await crashedRun(schedule.name, yesterday);
    const deps = { pool: db.pool, logger, runnerId: "r3", leaseMs: LEASE_MS };
    expect(await runScheduleTick(deps, schedule, today)).toBe("succeeded");
    expect(await runOf(schedule.name, yesterday)).toMatchObject({ attempt: 2, outcome: "succeeded" });
    expect(counter.runs).toBe(2);
  });

  it("a live run renews its lease, so its window is not claimed twice, and a stale holder cannot finish", async () => {
    const counter = { runs: 0 };
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const schedule = counting("live", counter, gate);
    await registerSchedules(db.pool, [schedule]);
    const window = new Date("2026-01-01T12:00:00.000Z");
    const deps = { pool: db.pool, logger, runnerId: "r4", leaseMs: LIVE_LEASE_MS };
    const first = runScheduleTick(deps, schedule, window);
    // The tick runs concurrently with this test: its claim may not have committed yet. Take the
    // first lease from the committed claim, not from a read that may precede it.
    const firstLease = await waitUntil("the window claimed", async () => {
      const { rows } = await db.pool.query<{ lease_until: Date }>(
        "SELECT lease_until FROM schedule_runs WHERE schedule = 'live' AND attempt = 1",
      );
      return rows[0]?.lease_until;
    });
    // Renewed at least twice past its first term: the lease outlives its term while the run works.
    await waitUntil("the lease renewed past two terms", async () => {
      const { rows } = await db.pool.query<{ renewed: boolean }>(
        `SELECT lease_until > $1::timestamptz + make_interval(secs => $2::float * 2 / 1000) AS renewed
           FROM schedule_runs WHERE schedule = 'live'`,
        [firstLease, LIVE_LEASE_MS],
      );
      return rows[0]?.renewed === true;
    });
    // A second runner's tick for the window is skipped. Its run would not wait on the gate, so a
    // wrong claim fails here instead of hanging.
    const challenger = counting("live", counter);
    expect(await runScheduleTick({ ...deps, runnerId: "r5" }, challenger, window)).toBe("skipped");
    // The lease is taken from under the holder (it froze past its lease and another runner claimed).
    await db.pool.query(
      "UPDATE schedule_runs SET attempt = attempt + 1, runner_id = 'r6' WHERE schedule = 'live'",
    );
    release();
    expect(await first).toBe("succeeded");
    // Its outcome was refused: the row still belongs to the newer attempt.
    expect(await runOf(schedule.name, window)).toEqual({ attempt: 2, outcome: "running", runner_id: "r6" });
    expect(counter.runs).toBe(1);
  });
});
