import { describe, expect, it } from "vitest";
import { windowStart } from "../../src/schedules/schedule-definition.js";
import { classifySchedule } from "../../src/schedules/schedule-status.js";
import { tickDueAt } from "../../src/schedules/schedule-tick.js";

describe("windowStart", () => {
  it("rounds the due time down to the cadence, so every tick of one window has one cycle key", () => {
    const every = { kind: "every", everyMs: 5_000 } as const;
    expect(windowStart(every, new Date("2026-01-01T10:00:04.999Z")).toISOString()).toBe(
      "2026-01-01T10:00:00.000Z",
    );
    expect(windowStart(every, new Date("2026-01-01T10:00:05.000Z")).toISOString()).toBe(
      "2026-01-01T10:00:05.000Z",
    );
    const daily = { kind: "cron", pattern: "17 3 * * *", tz: "UTC", periodMs: 86_400_000 } as const;
    expect(windowStart(daily, new Date("2026-01-01T03:17:00.000Z")).toISOString()).toBe(
      "2026-01-01T00:00:00.000Z",
    );
  });
});

describe("tickDueAt", () => {
  it("reads the scheduler's due time, not the time the job happened to run", () => {
    expect(
      tickDueAt({
        id: "repeat:x:1700000000000",
        opts: { prevMillis: 1_700_000_000_000 },
        timestamp: 5,
      }).getTime(),
    ).toBe(1_700_000_000_000);
    expect(tickDueAt({ id: "repeat:x:1700000000000", opts: {}, timestamp: 5 }).getTime()).toBe(
      1_700_000_000_000,
    );
    expect(tickDueAt({ id: "manual", opts: {}, timestamp: 5 }).getTime()).toBe(5);
  });
});

describe("classifySchedule", () => {
  const base = { cadenceMs: 60_000, registeredAt: new Date(0), lastOutcome: "succeeded" as const };
  const at = (ms: number) => new Date(ms);
  it("grades lateness: ok, then overdue past one cadence (≥ 30 s), then stopped past four (≥ 5 min)", () => {
    const last = { ...base, lastAttemptAt: at(0) };
    expect(classifySchedule(last, at(60_000)).state).toBe("ok");
    expect(classifySchedule(last, at(120_001)).state).toBe("overdue");
    expect(classifySchedule(last, at(360_001)).state).toBe("stopped");
    const daily = { ...last, cadenceMs: 86_400_000 };
    expect(classifySchedule(daily, at(86_400_000 + 3_600_000)).state).toBe("ok");
  });
  it("reports a never-run schedule as pending until it is late", () => {
    const never = { ...base, lastAttemptAt: null, lastOutcome: null };
    expect(classifySchedule(never, at(30_000)).state).toBe("pending");
    expect(classifySchedule(never, at(400_000)).state).toBe("stopped");
  });
  it("reports a paused schedule as paused, never late, and counts lateness after a resume from the resume", () => {
    const last = { ...base, lastAttemptAt: at(0) };
    expect(classifySchedule({ ...last, pausedAt: at(1) }, at(10 * 86_400_000))).toEqual({
      state: "paused",
      lateByMs: 0,
    });
    const resumed = { ...last, pausedAt: null, resumedAt: at(10 * 86_400_000) };
    expect(classifySchedule(resumed, at(10 * 86_400_000 + 30_000)).state).toBe("ok");
    expect(classifySchedule(resumed, at(10 * 86_400_000 + 120_001)).state).toBe("overdue");
  });
});
