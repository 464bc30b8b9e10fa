import { describe, expect, it } from "vitest";
import { relativeTime } from "../../src/api/console/console-time.js";
import { executionBody } from "../../src/api/console/execution-page.js";
import { type Activity, payloadOf } from "../../src/api/executions/activity.js";
import { presentedWait, stepTimings } from "../../src/api/executions/step-timing.js";
import type { JournalView } from "../../src/engine/execution-client.js";
import type { ExecutionRecord } from "../../src/store/pg-execution-reads.js";

/** How a run's journal timings, relative times and payloads read, for cases a live run reaches only slowly. */

const entry = (position: number, kind: JournalView["kind"], startedAt: string, completedAt: string | null) =>
  ({
    position,
    kind,
    name: `p${position}`,
    state: "ok",
    result: kind === "sleep" ? { wakeAt: "2026-12-01T10:00:02.000Z" } : { big: "x".repeat(500) },
    error: null,
    attempts: 1,
    seq: position,
    cause: 0,
    startedAt,
    completedAt,
  }) as JournalView;

const record = (overrides: Partial<ExecutionRecord> = {}): ExecutionRecord => ({
  id: "00000000-0000-4000-8000-000000000001",
  workflow: "demo.asset-issue",
  workflowVersion: 2,
  orgId: "acme",
  status: "waiting",
  waitingFor: [],
  wakeAt: null,
  progress: null,
  output: null,
  failure: null,
  hold: null,
  recoveryAttempts: 0,
  parentId: null,
  createdAt: "2026-12-01T10:00:00.000Z",
  updatedAt: "2026-12-01T10:00:00.000Z",
  completedAt: null,
  key: null,
  idempotencyKey: null,
  idempotencyExpiresAt: null,
  createdBy: null,
  cancelRequestedAt: null,
  cancelRequestedBy: null,
  cancelReason: null,
  paused: null,
  ...overrides,
});

// The engine writes a timer's row complete at the moment it is set: start and end alike.
const sleep = entry(0, "sleep", "2026-12-01T10:00:00.000Z", "2026-12-01T10:00:00.000Z");

describe("journal timings", () => {
  it("a timer ends when the run went past it: the next position's start", () => {
    const next = entry(1, "step", "2026-12-01T10:00:02.050Z", "2026-12-01T10:00:02.060Z");
    const timings = stepTimings([next, sleep], record({ status: "running" }));
    expect(timings.get(0)).toEqual({ completedAt: "2026-12-01T10:00:02.050Z", durationMs: 2050 });
    expect(timings.get(1)).toEqual({ completedAt: "2026-12-01T10:00:02.060Z", durationMs: 10 });
  });

  it("a timer the run still sleeps on has no end; the last one of a finished run ends with the run", () => {
    expect(stepTimings([sleep], record()).get(0)).toEqual({ completedAt: null, durationMs: null });
    const ended = record({ status: "completed", completedAt: "2026-12-01T10:00:02.500Z" });
    expect(stepTimings([sleep], ended).get(0)).toEqual({
      completedAt: "2026-12-01T10:00:02.500Z",
      durationMs: 2500,
    });
  });

  it("an approval reads under its declared name, other signals as they are", () => {
    expect(presentedWait("signal", "$approval:issue")).toEqual({ kind: "approval", name: "issue" });
    expect(presentedWait("signal", "note")).toEqual({ kind: "signal", name: "note" });
  });
});

describe("relative times", () => {
  const now = new Date("2026-12-01T10:10:00.000Z");
  it("says how long ago or until, at the moment of the render", () => {
    expect(relativeTime("2026-12-01T10:09:58.000Z", now)).toBe("just now");
    expect(relativeTime("2026-12-01T10:09:30.000Z", now)).toBe("30 s ago");
    expect(relativeTime("2026-12-01T10:07:00.000Z", now)).toBe("3 min ago");
    expect(relativeTime("2026-12-01T07:10:00.000Z", now)).toBe("3 h ago");
    expect(relativeTime("2026-11-27T10:10:00.000Z", now)).toBe("4 days ago");
    expect(relativeTime("2026-12-01T12:10:00.000Z", now)).toBe("in 2 h");
  });
});

describe("the execution page's payloads", () => {
  const activity = (withPayloads: boolean): Activity => ({
    executionId: "00000000-0000-4000-8000-000000000001",
    payloadsIncluded: withPayloads,
    input: payloadOf({ memo: "y".repeat(400) }, withPayloads),
    output: null,
    parent: null,
    children: { items: [], more: null },
    signals: [],
    votes: [],
    auditIncluded: false,
    audit: [],
  });
  const page = (role: "operator" | "integrator") =>
    executionBody(
      {
        record: record({ status: "running" }),
        journal: [entry(0, "step", "2026-12-01T10:00:00.000Z", "2026-12-01T10:00:00.010Z")],
        votes: [],
        user: { principal: { keyId: "k", orgId: "acme", role, name: role, subject: role }, csrf: "c" },
        activity: activity(role === "operator"),
        now: new Date("2026-12-01T10:03:00.000Z"),
      },
      null,
      null,
    ).text;

  it("shows the whole payload folded in a <details>, the journal's too, never cut at 200 characters", () => {
    const text = page("operator");
    expect(text).toContain("y".repeat(400));
    expect(text).toContain("x".repeat(500));
    expect(text).toMatch(/<details><summary>/);
    expect(text).toContain("(3 min ago)");
  });

  it("shows roles that may not read payloads the size and hash instead", () => {
    const text = page("integrator");
    expect(text).not.toContain("y".repeat(400));
    expect(text).toMatch(/data-payload-hidden>\d+ bytes, sha256 <code>[0-9a-f]{12}…<\/code>/);
  });
});
