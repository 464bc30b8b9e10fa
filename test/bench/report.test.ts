import { describe, expect, it } from "vitest";
import { parseBenchArgs } from "../../bench/cli-options.js";
import { median, percentile, ratio, summarize } from "../../bench/lib/stats.js";
import {
  buildReport,
  computeRatios,
  evaluateTargets,
  figureAt,
  formatNumber,
  renderTable,
} from "../../bench/report.js";
import { WORKLOAD_IDS, type WorkloadResult } from "../../bench/workloads/types.js";

const machine = {
  cores: 2,
  cpuModel: "test",
  totalMemoryBytes: 1,
  node: "v20",
  postgresVersion: "15",
  redisVersion: "7",
  serverSynchronousCommit: "on",
  benchSynchronousCommit: "on",
  loadAverageAtStart: [0, 0, 0],
};

function w2(tenor: number, floor: number, dbos: number): WorkloadResult {
  return {
    id: "W2",
    title: "throughput",
    status: "ok",
    params: {},
    systems: {
      floor: { status: "ok", figures: { stepsPerSec: floor, latencyMsP50: 10 } },
      dbos: { status: "ok", figures: { stepsPerSec: dbos } },
      bullmq: { status: "not-measured", reason: "test" },
      tenor: { status: "ok", figures: { stepsPerSec: tenor, latencyMsP50: 20 } },
    },
  };
}

describe("percentile", () => {
  it("interpolates between closest ranks", () => {
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5);
    expect(percentile([10, 20, 30, 40, 50], 0)).toBe(10);
    expect(percentile([10, 20, 30, 40, 50], 100)).toBe(50);
    expect(percentile([10, 20, 30, 40, 50], 25)).toBe(20);
  });

  it("does not depend on input order and does not sort the caller's array", () => {
    const samples = [5, 1, 4, 2, 3];
    expect(percentile(samples, 50)).toBe(3);
    expect(samples).toEqual([5, 1, 4, 2, 3]);
  });

  it("gives p99 of 1..100 as 99.01", () => {
    const samples = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(samples, 99)).toBeCloseTo(99.01, 10);
  });

  it("returns NaN for no samples and refuses a percentile outside 0–100", () => {
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });

  it("summarizes count, extremes, mean and median", () => {
    expect(summarize([3, 1, 2])).toMatchObject({ count: 3, min: 1, max: 3, mean: 2, p50: 2 });
    expect(median([7])).toBe(7);
  });
});

describe("ratio", () => {
  it("divides, and is null when a side is missing, non-finite or zero", () => {
    expect(ratio(6, 3)).toBe(2);
    expect(ratio(null, 3)).toBeNull();
    expect(ratio(3, 0)).toBeNull();
    expect(ratio(Number.NaN, 2)).toBeNull();
  });
});

describe("report", () => {
  it("computes Tenor's ratio to each measured peer, figure by figure", () => {
    const ratios = computeRatios(w2(4000, 5000, 800));
    expect(ratios.floor).toEqual({ stepsPerSec: 0.8, latencyMsP50: 2 });
    expect(ratios.dbos).toEqual({ stepsPerSec: 5 });
    expect(ratios.bullmq).toBeUndefined();
  });

  it("divides variant figures key by key", () => {
    const result: WorkloadResult = {
      id: "W6",
      title: "replay",
      status: "ok",
      params: {},
      systems: {
        floor: { status: "ok", figures: { replayMs: { "10": 1, "100": 2 } } },
        tenor: { status: "ok", figures: { replayMs: { "10": 3, "100": 2 } } },
      },
    };
    expect(computeRatios(result).floor).toEqual({ replayMs: { "10": 3, "100": 1 } });
    expect(figureAt({ replayMs: { "10": 3 } }, "replayMs.10")).toBe(3);
    expect(figureAt({ replayMs: { "10": 3 } }, "replayMs")).toBeNull();
  });

  it("marks targets met, missed, or not measured", () => {
    const targets = evaluateTargets([w2(4100, 5000, 1100), { ...w2(4100, 5000, 1100), id: "W2C" }]);
    const byText = Object.fromEntries(targets.filter((t) => t.workload === "W2").map((t) => [t.target, t]));
    expect(byText["≥ 4,000 steps/s"]?.met).toBe(true);
    expect(byText["≥ 4× DBOS (Tenor/dbos)"]?.met).toBe(false);
    const closedLoop = Object.fromEntries(
      targets.filter((t) => t.workload === "W2C").map((t) => [t.target, t]),
    );
    expect(closedLoop["runner role ≥ 0.7× the group-committed floor (Tenor/floor)"]).toMatchObject({
      actual: 0.82,
      met: true,
    });
    expect(targets.find((t) => t.workload === "W9")?.met).toBeNull();
  });

  it("renders a table row per figure with ratios, and the targets", () => {
    const report = buildReport({
      date: new Date("2026-01-01T00:00:00Z"),
      mode: "quick",
      machine,
      durationSeconds: 1,
      results: [w2(4000, 5000, 800)],
      notes: [],
    });
    const table = renderTable(report);
    expect(table).toContain(
      "| workload | figure | floor | floor-serial | bullmq | dbos | tenor-in-process | tenor | tenor/floor | tenor/floor-serial | tenor/bullmq | tenor/dbos | tenor/tenor-in-process |",
    );
    expect(table).toContain(
      "| W2 throughput | stepsPerSec (steps/s) | 5,000 |  | n/a | 800 |  | 4,000 | 0.80× |  |  | 5.00× |  |",
    );
    expect(table).toContain("| W2 | ≥ 4× DBOS (Tenor/dbos) | 5.00 | met |");
    expect(report.workloads[0]?.ratios.floor?.stepsPerSec).toBe(0.8);
  });

  it("divides Tenor by both floors in W1, each in its own column", () => {
    const result: WorkloadResult = {
      id: "W1",
      title: "serial latency",
      status: "ok",
      params: {},
      systems: {
        floor: { status: "ok", figures: { msPerStepP50: 0.25 } },
        "floor-serial": { status: "ok", figures: { msPerStepP50: 0.5 } },
        tenor: { status: "ok", figures: { msPerStepP50: 1 } },
      },
    };
    const report = buildReport({
      date: new Date("2026-01-01T00:00:00Z"),
      mode: "quick",
      machine,
      durationSeconds: 1,
      results: [result],
      notes: [],
    });
    expect(report.workloads[0]?.ratios).toEqual({
      floor: { msPerStepP50: 4 },
      "floor-serial": { msPerStepP50: 2 },
    });
    expect(renderTable(report)).toContain(
      "| W1 serial latency | msPerStepP50 (ms) | 0.25 | 0.50 |  |  |  | 1.00 | 4.00× | 2.00× |  |  |  |",
    );
  });

  it("shows a workload that failed as one row with its reason under Tenor", () => {
    const report = buildReport({
      date: new Date("2026-01-01T00:00:00Z"),
      mode: "quick",
      machine,
      durationSeconds: 1,
      results: [{ id: "W3", title: "start rate", status: "error", reason: "boom", params: {}, systems: {} }],
      notes: [],
    });
    expect(renderTable(report)).toContain("| W3 start rate | error |  |  |  |  |  | boom |  |  |  |  |  |");
  });

  it("formats numbers for the table", () => {
    expect(formatNumber(12345.6)).toBe("12,346");
    expect(formatNumber(0.0123)).toBe("0.012");
    expect(formatNumber(null)).toBe("—");
  });
});

describe("parseBenchArgs", () => {
  it("reads --quick, --only and --out", () => {
    expect(parseBenchArgs(["--quick", "--only", "w1,W2"])).toEqual({
      quick: true,
      only: ["W1", "W2"],
      out: null,
    });
    expect(parseBenchArgs(["--only=W9", "--out", "x.json"])).toMatchObject({ only: ["W9"], out: "x.json" });
    expect(parseBenchArgs([]).only).toEqual([...WORKLOAD_IDS]);
  });

  it("refuses unknown workloads and flags", () => {
    expect(() => parseBenchArgs(["--only", "W99"])).toThrow(/W99/);
    expect(() => parseBenchArgs(["--fast"])).toThrow(/unknown argument/);
  });
});
