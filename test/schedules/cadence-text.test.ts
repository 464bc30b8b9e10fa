import { getNextMillis } from "bullmq";
import { describe, expect, it } from "vitest";
import { describeCadence, nextRunFromCadence, parseStoredCadence } from "../../src/schedules/cadence-text.js";
import { scheduleView } from "../../src/schedules/schedule-control.js";
import type { ScheduleStatus } from "../../src/schedules/schedule-status.js";

const daily = { kind: "cron", pattern: "17 3 * * *", tz: "UTC", periodMs: 86_400_000 } as const;

describe("describeCadence", () => {
  it("says an interval in its largest whole unit", () => {
    const every = (everyMs: number) => describeCadence({ kind: "every", everyMs });
    expect(every(5_000)).toBe("every 5 seconds");
    expect(every(1_000)).toBe("every second");
    expect(every(300_000)).toBe("every 5 minutes");
    expect(every(60_000)).toBe("every minute");
    expect(every(3_600_000)).toBe("hourly");
    expect(every(7_200_000)).toBe("every 2 hours");
    expect(every(86_400_000)).toBe("daily");
    expect(every(90_000)).toBe("every 90 seconds");
    expect(every(250)).toBe("every 250 ms");
  });
  it("says a daily or hourly pattern at its time in its zone, and any other pattern as it is", () => {
    expect(describeCadence(daily)).toBe("daily at 03:17 UTC");
    expect(describeCadence({ ...daily, pattern: "5 * * * *" })).toBe("hourly at :05 UTC");
    expect(describeCadence({ ...daily, pattern: "0 9 * * 1", tz: "Europe/Paris" })).toBe(
      'cron "0 9 * * 1" (Europe/Paris)',
    );
  });
});

describe("nextRunFromCadence", () => {
  it("is what BullMQ's job scheduler computes: the next multiple of the interval, the next cron time", () => {
    const now = Date.parse("2026-01-01T10:00:02.500Z");
    expect(nextRunFromCadence({ kind: "every", everyMs: 5_000 }, now)).toBe(
      Date.parse("2026-01-01T10:00:05.000Z"),
    );
    expect(nextRunFromCadence(daily, now)).toBe(Date.parse("2026-01-02T03:17:00.000Z"));
    expect(nextRunFromCadence(daily, now)).toBe(getNextMillis(now, { pattern: daily.pattern, tz: "UTC" }));
  });
});

describe("parseStoredCadence", () => {
  it("reads what registration stores, and nothing else", () => {
    expect(parseStoredCadence({ kind: "every", everyMs: 500 })).toEqual({ kind: "every", everyMs: 500 });
    expect(parseStoredCadence({ ...daily })).toEqual(daily);
    expect(parseStoredCadence(null)).toBeNull();
    expect(parseStoredCadence({ kind: "every", everyMs: -1 })).toBeNull();
  });
});

describe("scheduleView", () => {
  const status: ScheduleStatus = {
    name: "retention",
    cadenceMs: 86_400_000,
    cadence: daily,
    lastAttemptAt: null,
    lastOutcome: null,
    lastDurationMs: null,
    lastSuccessAt: null,
    lastError: null,
    consecutiveFailures: 0,
    pausedAt: null,
    pausedBy: null,
    resumedAt: null,
    state: "pending",
    lateByMs: 0,
  };
  const now = Date.parse("2026-01-01T10:00:00.000Z");
  it("takes the job scheduler's next time when Redis has one, else computes it from the cadence", () => {
    const fromScheduler = scheduleView(status, Date.parse("2026-01-01T03:17:00.000Z"), now);
    expect(fromScheduler).toMatchObject({ nextRunSource: "scheduler", cadenceText: "daily at 03:17 UTC" });
    expect(fromScheduler.nextRunAt?.toISOString()).toBe("2026-01-01T03:17:00.000Z");
    const computed = scheduleView(status, undefined, now);
    expect(computed.nextRunSource).toBe("definition");
    expect(computed.nextRunAt?.toISOString()).toBe("2026-01-02T03:17:00.000Z");
  });
  it("has no next run while paused, even if a job scheduler lingers", () => {
    const paused = scheduleView({ ...status, pausedAt: new Date(now), state: "paused" }, now + 1, now);
    expect(paused).toMatchObject({ nextRunAt: null, nextRunSource: null });
  });
  it("says the interval of an older release's row, which stored no cadence", () => {
    const old = scheduleView({ ...status, cadence: null, cadenceMs: 300_000 }, undefined, now);
    expect(old).toMatchObject({ cadenceText: "every 5 minutes", nextRunAt: null, nextRunSource: null });
  });
});
