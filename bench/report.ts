import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { MachineInfo } from "./lib/machine.js";
import { ratio, round } from "./lib/stats.js";
import {
  type Figures,
  type FigureValue,
  SYSTEMS,
  type SystemName,
  type WorkloadId,
  type WorkloadResult,
} from "./workloads/types.js";

/** Every figure name the report knows, with its unit and which direction is better. */
export const FIGURES: Readonly<Record<string, { unit: string; better: "lower" | "higher" }>> = {
  msPerStepP50: { unit: "ms", better: "lower" },
  msPerStepP99: { unit: "ms", better: "lower" },
  stepsPerSec: { unit: "steps/s", better: "higher" },
  latencyMsP50: { unit: "ms", better: "lower" },
  latencyMsP99: { unit: "ms", better: "lower" },
  startsPerSec: { unit: "starts/s", better: "higher" },
  childrenPerSec: { unit: "children/s", better: "higher" },
  recoverySeconds: { unit: "s", better: "lower" },
  recoverySecondsLockExpiry: { unit: "s", better: "lower" },
  recoveryOverLockExpiry: { unit: "×", better: "lower" },
  duplicateSideEffects: { unit: "count", better: "lower" },
  replayMs: { unit: "ms", better: "lower" },
  runnerBytesPerWaiting: { unit: "B", better: "lower" },
  redisBytesPerWaiting: { unit: "B", better: "lower" },
  latenessMsP50: { unit: "ms", better: "lower" },
  latenessMsP99: { unit: "ms", better: "lower" },
  commandsPerSec: { unit: "cmd/s", better: "higher" },
  orderingViolations: { unit: "count", better: "lower" },
  transfersPerSec: { unit: "transfers/s", better: "higher" },
  failedTransfers: { unit: "count", better: "lower" },
  acceptedP99Ms: { unit: "ms", better: "lower" },
  refusalRate: { unit: "share", better: "lower" },
  p99OffOverOn: { unit: "×", better: "higher" },
  otherAnswers: { unit: "count", better: "lower" },
  logsPerSec: { unit: "logs/s", better: "higher" },
  blocksPerSec: { unit: "blocks/s", better: "higher" },
  stepsPerSecByRunners: { unit: "steps/s", better: "higher" },
  scaling4over1: { unit: "×", better: "higher" },
  engineMsP50: { unit: "ms", better: "lower" },
  apiWaitMsP50: { unit: "ms", better: "lower" },
  apiWaitMsP99: { unit: "ms", better: "lower" },
  pollingWaitMsP50: { unit: "ms", better: "lower" },
  apiOverEngineP50: { unit: "×", better: "lower" },
  pollingOverEngineP50: { unit: "×", better: "lower" },
  errors: { unit: "count", better: "lower" },
  engineStepsPerSec: { unit: "steps/s", better: "higher" },
  apiOverEngine: { unit: "×", better: "higher" },
};

/** A target of the issue, checked against Tenor's figures (or its ratio to another system). */
export interface Target {
  workload: WorkloadId;
  text: string;
  /** Figure path: `stepsPerSec`, or `replayMs.10000` for a variant. */
  figure: string;
  /** Compare Tenor's figure itself, or its ratio to this system's. */
  against?: SystemName;
  op: "<=" | ">=" | "==";
  value: number;
}

export const TARGETS: readonly Target[] = [
  { workload: "W1", text: "≤ 1 ms/step p50", figure: "msPerStepP50", op: "<=", value: 1 },
  {
    workload: "W1",
    text: "10-step ms/step ≤ 1.5× floor-serial",
    figure: "msPerStepP50ByLength.10",
    against: "floor-serial",
    op: "<=",
    value: 1.5,
  },
  { workload: "W2", text: "≥ 4,000 steps/s", figure: "stepsPerSec", op: ">=", value: 4000 },
  { workload: "W2", text: "≥ 4× DBOS", figure: "stepsPerSec", against: "dbos", op: ">=", value: 4 },
  {
    workload: "W2C",
    text: "runner role ≥ 0.7× the group-committed floor",
    figure: "stepsPerSec",
    against: "floor",
    op: ">=",
    value: 0.7,
  },
  { workload: "W2C", text: "≥ 5× DBOS", figure: "stepsPerSec", against: "dbos", op: ">=", value: 5 },
  {
    workload: "W16",
    text: "API closed loop ≥ 0.8× the engine's closed loop (steps/s)",
    figure: "apiOverEngine",
    op: ">=",
    value: 0.8,
  },
  {
    workload: "W4",
    text: "children/s ≥ 1× plain BullMQ",
    figure: "childrenPerSec",
    against: "bullmq",
    op: ">=",
    value: 1,
  },
  { workload: "W16", text: "0 errors through the API", figure: "errors", op: "==", value: 0 },
  { workload: "W5", text: "recovery ≤ 10 s", figure: "recoverySeconds", op: "<=", value: 10 },
  { workload: "W5", text: "stretch: recovery ≤ 5 s", figure: "recoverySeconds", op: "<=", value: 5 },
  { workload: "W5", text: "takeover ≤ 2 s (runner liveness)", figure: "recoverySeconds", op: "<=", value: 2 },
  { workload: "W5", text: "0 duplicate side effects", figure: "duplicateSideEffects", op: "==", value: 0 },
  { workload: "W6", text: "≤ 100 ms at 10,000 steps", figure: "replayMs.10000", op: "<=", value: 100 },
  {
    workload: "W7",
    text: "~0 runner bytes per waiting (≤ 256 B)",
    figure: "runnerBytesPerWaiting",
    op: "<=",
    value: 256,
  },
  { workload: "W7", text: "≤ 1 KB Redis per waiting", figure: "redisBytesPerWaiting", op: "<=", value: 1024 },
  { workload: "W8", text: "lateness p99 ≤ 100 ms", figure: "latenessMsP99", op: "<=", value: 100 },
  { workload: "W9", text: "≥ 5,000 commands/s", figure: "commandsPerSec", op: ">=", value: 5000 },
  { workload: "W9", text: "0 ordering violations", figure: "orderingViolations", op: "==", value: 0 },
  { workload: "W10", text: "0 failed transfers", figure: "failedTransfers", op: "==", value: 0 },
  {
    workload: "W17",
    text: "4 chains × 8 senders ≥ 0.5× the bare viem program (transfers/s)",
    figure: "transfersPerSec",
    against: "floor",
    op: ">=",
    value: 0.5,
  },
  { workload: "W17", text: "0 failed transfers", figure: "failedTransfers", op: "==", value: 0 },
  { workload: "W17", text: "nonces contiguous per sender", figure: "nonceGaps", op: "==", value: 0 },
  {
    workload: "W13",
    text: "admission keeps accepted p99 ≥ 2× lower past saturation",
    figure: "p99OffOverOn",
    op: ">=",
    value: 2,
  },
  {
    workload: "W13",
    text: "with admission, no answer but 202 or 503",
    figure: "otherAnswers.on",
    op: "==",
    value: 0,
  },
  {
    workload: "W12",
    text: "≥ 50% of the floor (logs/s, one replica)",
    figure: "logsPerSec",
    against: "floor",
    op: ">=",
    value: 0.5,
  },
  {
    workload: "W11",
    text: "Prefer: wait ≤ 1.2× the engine's completion latency",
    figure: "apiOverEngineP50",
    op: "<=",
    value: 1.2,
  },
];

export interface TargetResult {
  workload: WorkloadId;
  target: string;
  actual: number | null;
  /** null when the figure was not measured (the workload or a system is unavailable). */
  met: boolean | null;
}

type Peer = Exclude<SystemName, "tenor">;

/** The systems Tenor is divided by, in table order. */
const PEERS: readonly Peer[] = SYSTEMS.filter((s): s is Peer => s !== "tenor");

/** Tenor's figure divided by another system's, per figure (and per variant). */
export type Ratios = Partial<Record<Peer, Record<string, FigureValue | null>>>;

export interface Report {
  date: string;
  mode: "quick" | "full";
  machine: MachineInfo;
  durationSeconds: number;
  workloads: Array<WorkloadResult & { ratios: Ratios }>;
  targets: TargetResult[];
  notes: string[];
}

function figuresOf(result: WorkloadResult, system: SystemName): Figures | null {
  const r = result.systems[system];
  return r && r.status === "ok" ? r.figures : null;
}

/** Tenor/peer for every figure both report; variants (objects) are divided key by key. */
export function computeRatios(result: WorkloadResult): Ratios {
  const tenor = figuresOf(result, "tenor");
  const ratios: Ratios = {};
  if (!tenor) return ratios;
  for (const peer of PEERS) {
    const other = figuresOf(result, peer);
    if (!other) continue;
    const row: Record<string, FigureValue | null> = {};
    for (const [name, value] of Object.entries(tenor)) {
      const peerValue = other[name];
      if (peerValue === undefined) continue;
      if (typeof value === "number" && typeof peerValue === "number") {
        row[name] = roundOrNull(ratio(value, peerValue));
      } else if (typeof value === "object" && typeof peerValue === "object") {
        const byKey: Record<string, number> = {};
        for (const [key, v] of Object.entries(value)) {
          const r = roundOrNull(ratio(v, peerValue[key]));
          if (r !== null) byKey[key] = r;
        }
        row[name] = byKey;
      }
    }
    ratios[peer] = row;
  }
  return ratios;
}

function roundOrNull(value: number | null): number | null {
  return value === null ? null : round(value, 3);
}

/** Reads `name` or `name.variant` from figures. */
export function figureAt(figures: Figures | null, path: string): number | null {
  if (!figures) return null;
  const [name, variant] = path.split(".") as [string, string | undefined];
  const value = figures[name];
  if (value === undefined) return null;
  if (typeof value === "number") return variant === undefined ? value : null;
  return variant === undefined ? null : (value[variant] ?? null);
}

export function evaluateTargets(results: readonly WorkloadResult[]): TargetResult[] {
  return TARGETS.map((target) => {
    const result = results.find((r) => r.id === target.workload);
    const tenor = result ? figureAt(figuresOf(result, "tenor"), target.figure) : null;
    const other =
      result && target.against ? figureAt(figuresOf(result, target.against), target.figure) : null;
    const actual = target.against ? ratio(tenor, other) : tenor;
    const met =
      actual === null || !Number.isFinite(actual)
        ? null
        : target.op === "<="
          ? actual <= target.value
          : target.op === ">="
            ? actual >= target.value
            : actual === target.value;
    const label = target.against ? `${target.text} (Tenor/${target.against})` : target.text;
    return {
      workload: target.workload,
      target: label,
      actual: actual === null ? null : round(actual, 3),
      met,
    };
  });
}

export function buildReport(input: {
  date: Date;
  mode: "quick" | "full";
  machine: MachineInfo;
  durationSeconds: number;
  results: readonly WorkloadResult[];
  notes: string[];
}): Report {
  return {
    date: input.date.toISOString(),
    mode: input.mode,
    machine: input.machine,
    durationSeconds: input.durationSeconds,
    workloads: input.results.map((r) => ({ ...r, ratios: computeRatios(r) })),
    targets: evaluateTargets(input.results),
    notes: input.notes,
  };
}

/** Formats a figure for the table: 3 significant digits for small values, thousands separators for large. */
export function formatNumber(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "—";
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString("en-US");
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  if (abs === 0) return "0";
  return value.toPrecision(2);
}

function cell(result: WorkloadResult, system: SystemName, path: string): string {
  const r = result.systems[system];
  if (!r) return "";
  if (r.status !== "ok") return r.status === "error" ? "error" : "n/a";
  return formatNumber(figureAt(r.figures, path));
}

function ratioCell(ratios: Ratios, peer: Peer, path: string): string {
  const row = ratios[peer];
  if (!row) return "";
  const [name, variant] = path.split(".") as [string, string | undefined];
  const value = row[name];
  if (value === undefined || value === null) return "";
  const n = typeof value === "number" ? value : variant ? value[variant] : undefined;
  return n === undefined ? "" : `${formatNumber(n)}×`;
}

/** Every figure path any system reported for a workload, in first-seen order. */
function figurePaths(result: WorkloadResult): string[] {
  const paths: string[] = [];
  for (const system of SYSTEMS) {
    const figures = figuresOf(result, system);
    if (!figures) continue;
    for (const [name, value] of Object.entries(figures)) {
      const names = typeof value === "number" ? [name] : Object.keys(value).map((k) => `${name}.${k}`);
      for (const path of names) if (!paths.includes(path)) paths.push(path);
    }
  }
  return paths;
}

/** The results as rows of a Markdown table (also readable on a terminal). */
export function renderTable(report: Report): string {
  const header = ["workload", "figure", ...SYSTEMS, ...PEERS.map((peer) => `tenor/${peer}`)];
  const rows: string[][] = [];
  for (const result of report.workloads) {
    if (result.status !== "ok") {
      const blank = header.map(() => "");
      blank.splice(0, 2, `${result.id} ${result.title}`, result.status);
      blank[SYSTEMS.indexOf("tenor") + 2] = result.reason ?? "";
      rows.push(blank);
      continue;
    }
    for (const path of figurePaths(result)) {
      const unit = FIGURES[path.split(".")[0] as string]?.unit ?? "";
      rows.push([
        `${result.id} ${result.title}`,
        unit ? `${path} (${unit})` : path,
        ...SYSTEMS.map((system) => cell(result, system, path)),
        ...PEERS.map((peer) => ratioCell(result.ratios, peer, path)),
      ]);
    }
  }
  const lines = [header, header.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`);
  const targets = report.targets.map(
    (t) =>
      `| ${t.workload} | ${t.target} | ${formatNumber(t.actual)} | ${t.met === null ? "not measured" : t.met ? "met" : "MISSED"} |`,
  );
  return [
    ...lines,
    "",
    "| workload | target | Tenor | result |",
    "| --- | --- | --- | --- |",
    ...targets,
  ].join("\n");
}

/** Writes the report as JSON (creating the folder). */
export function writeReport(path: string, report: Report): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
}
