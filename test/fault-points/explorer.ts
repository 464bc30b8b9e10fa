import type { ExecutionView } from "../../src/engine/execution-client.js";
import type { TestProcess } from "../support/processes.js";
import { checkRun, TERMINAL_BOUND_MS, TURN_BUDGET, turnOf } from "./checker.js";
import { ALL_FAULTS, type FaultKind, faultsFor, isKill, parseRunName, runName } from "./faults.js";
import type { Armed, PointRecord } from "./interposer.js";
import { SHAPES, type Shape } from "./shapes.js";
import type { ExplorerWorld } from "./world.js";

/**
 * The fault-point explorer's loop (docs/engine.md, "The fault-point explorer"): per shape, two
 * clean runs name the points both agree on; then one run per selected (point × fault), each
 * judged by test/fault-points/checker.ts. One execution at a time, on one reused runner.
 */

export interface ExplorerOptions {
  /** `short`: a deterministic sample (npm test); `all`: every point × fault. */
  mode: "short" | "all";
  /** Replay exactly these runs (`<shape>/<point>/<fault>`); overrides `mode`. */
  only: string[] | null;
  /** Explore only these shapes; null: all. */
  shapes: string[] | null;
  /** Seed of the short form's sample. */
  seed: number;
  /** Also print every point with a sample of what was sent there. */
  verbose?: boolean;
  log(line: string): void;
}

export interface RunFailure {
  name: string;
  problems: string[];
}

export interface ShapeSummary {
  shape: string;
  pgPoints: number;
  redisPoints: number;
  runs: number;
  notReached: number;
  failures: number;
}

export interface ExplorerReport {
  mode: string;
  seed: number;
  shapes: ShapeSummary[];
  runs: number;
  notReached: string[];
  failures: RunFailure[];
  spawned: number;
  elapsedMs: number;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A small deterministic generator (xorshift32), as the chaos suite uses. */
function generator(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4_294_967_296;
  };
}

interface RunResult {
  problems: string[];
  points: PointRecord[];
  reached: boolean;
  children: number;
}

export async function explore(world: ExplorerWorld, options: ExplorerOptions): Promise<ExplorerReport> {
  const began = Date.now();
  const only = options.only?.map(parseRunName) ?? null;
  const wanted = only ? new Set(only.map((r) => r.shape)) : options.shapes ? new Set(options.shapes) : null;
  const unknown = [...(wanted ?? [])].filter((name) => !SHAPES.some((s) => s.name === name));
  if (unknown.length > 0)
    throw new Error(`unknown shape(s) ${unknown.join(", ")}: ${SHAPES.map((s) => s.name).join(", ")}`);
  const retired: string[] = [];
  const report: ExplorerReport = {
    mode: only ? "only" : options.mode,
    seed: options.seed,
    shapes: [],
    runs: 0,
    notReached: [],
    failures: [],
    spawned: 0,
    elapsedMs: 0,
  };
  let serial = 0;
  const run = async (shape: Shape, armed: Armed | null, expectedChildren: number): Promise<RunResult> => {
    const outcome = await runOnce(world, shape, armed, `r${++serial}`, retired, expectedChildren);
    report.runs++;
    return outcome;
  };

  for (const [index, shape] of SHAPES.entries()) {
    if (wanted && !wanted.has(shape.name)) continue;
    const summary: ShapeSummary = {
      shape: shape.name,
      pgPoints: 0,
      redisPoints: 0,
      runs: 0,
      notReached: 0,
      failures: 0,
    };
    report.shapes.push(summary);
    const fail = (name: string, problems: string[]) => {
      report.failures.push({ name, problems });
      summary.failures++;
      options.log(`FAIL ${name}\n  ${problems.join("\n  ")}`);
    };
    const clean = await run(shape, null, 1);
    summary.runs++;
    if (clean.problems.length > 0) {
      fail(`${shape.name}/clean`, clean.problems);
      continue;
    }
    let points = clean.points;
    if (!only) {
      const second = await run(shape, null, 1);
      summary.runs++;
      if (second.problems.length > 0) {
        fail(`${shape.name}/clean`, second.problems);
        continue;
      }
      const agreed = new Set(second.points.map((p) => p.name));
      points = clean.points.filter((p) => agreed.has(p.name));
    }
    summary.pgPoints = points.filter((p) => p.name.startsWith("pg:")).length;
    summary.redisPoints = points.length - summary.pgPoints;
    const runs = only
      ? only.filter((r) => r.shape === shape.name)
      : options.mode === "all"
        ? points.flatMap((p) =>
            faultsFor(p.name).map((fault) => ({ shape: shape.name, point: p.name, fault })),
          )
        : shortSample(shape, index, points, options.seed);
    if (options.verbose) for (const p of points) options.log(`  ${p.name}  ${p.sample}`);
    options.log(
      `${shape.name}: ${points.length} points (${summary.pgPoints} pg, ${summary.redisPoints} redis), ${runs.length} fault runs`,
    );
    for (const selected of runs) {
      const name = runName(selected);
      const result = await run(
        shape,
        { run: name, point: selected.point, fault: selected.fault },
        clean.children,
      );
      summary.runs++;
      if (!result.reached) {
        summary.notReached++;
        report.notReached.push(name);
      }
      if (result.problems.length > 0) fail(name, result.problems);
      else options.log(`ok   ${name}${result.reached ? "" : " (point not reached)"}`);
    }
  }
  report.spawned = world.spawned();
  report.elapsedMs = Date.now() - began;
  return report;
}

/**
 * The short form's sample: per shape two runs whose fault kinds rotate with the shape's index and
 * the seed (so the shapes together cover every kind several times over), each at a seeded point
 * that takes that kind; and the regression run of defect 1 (22P05 on the first journal row of
 * `all-settled`, quote's).
 */
function shortSample(shape: Shape, index: number, points: PointRecord[], seed: number) {
  const random = generator(seed * 7_919 + index + 1);
  const picks: { shape: string; point: string; fault: FaultKind }[] = [];
  for (const slot of [0, 1]) {
    const fault = ALL_FAULTS[(index * 2 + slot + seed) % ALL_FAULTS.length] as FaultKind;
    const eligible = points.filter((p) => faultsFor(p.name).includes(fault));
    const point = eligible[Math.floor(random() * eligible.length)];
    if (point) picks.push({ shape: shape.name, point: point.name, fault });
  }
  if (shape.name === "all-settled") {
    const firstRow = points.find((p) => /^pg:tenor_append_entr/.test(p.name));
    if (firstRow && !picks.some((p) => p.point === firstRow.name && p.fault === "22P05")) {
      picks.push({ shape: shape.name, point: firstRow.name, fault: "22P05" });
    }
  }
  return picks;
}

/** One execution of `shape`, armed with `armed`, driven to its end or to the bound, then judged. */
async function runOnce(
  world: ExplorerWorld,
  shape: Shape,
  armed: Armed | null,
  tag: string,
  retired: string[],
  expectedChildren: number,
): Promise<RunResult> {
  let runner = await world.runner();
  try {
    await runner.arm({ armed, retired });
  } catch {
    // The previous run's kill landed after its execution ended, while this one was being armed.
    runner = await world.runner();
    await runner.arm({ armed, retired });
  }
  const armedProcess = runner.process;
  const startedAt = Date.now();
  const id = await world.start(shape.workflow, shape.input(tag));
  let view: ExecutionView = await world.view(id);
  let driven = shape.driver === "none";
  for (;;) {
    view = await world.view(id);
    if (view.status === "completed" || view.status === "failed") break;
    if (Date.now() - startedAt > TERMINAL_BOUND_MS) break;
    if (view.status === "running" && (await turnOf(world.db.pool, id)) > TURN_BUDGET) break;
    // A fault killed the runner: a fresh one, without any fault, takes over.
    if (!runner.process.running()) runner = await world.runner();
    if (!driven) driven = await drive(world, shape, view, id);
    await pause(50);
  }
  const elapsedMs = Date.now() - startedAt;
  if (view.status === "completed" || view.status === "failed") await settle(world, armed, armedProcess);
  // A kill-after at the last point may land while we ask; such a run recorded no points anyway.
  const points = armedProcess.running()
    ? await runner.collect().then(
        (c) => c.points,
        () => [],
      )
    : [];
  const fired = armed ? await world.fired(armed.run) : null;
  const problems = await checkRun(world.db.pool, shape.expected, {
    executionId: id,
    view,
    elapsedMs,
    fault: armed ? { point: armed.point, kind: armed.fault } : null,
    fired,
    expectedChildren,
  });
  const { rows } = await world.db.pool.query<{ id: string }>(
    "SELECT id FROM executions WHERE id = $1 OR parent_id = $1",
    [id],
  );
  retired.push(...rows.map((r) => r.id));
  return { problems, points, reached: armed === null || fired !== null, children: rows.length - 1 };
}

/** How long trailing traffic (the job's finish, the finished notice) may take after the terminal status, in ms. */
const TRAILING_MS = 400;
/** How long an armed fault may take to fire after the terminal status, in ms. */
const TRAILING_FAULT_MS = 2_000;

/**
 * Lets the traffic that follows a terminal status happen before the run is judged and the next one
 * armed: a clean run records its trailing points, an armed one fires at them (a kill there must
 * end this runner before the next run is armed on it).
 */
async function settle(world: ExplorerWorld, armed: Armed | null, runner: TestProcess): Promise<void> {
  if (!armed) {
    await pause(TRAILING_MS);
    return;
  }
  const deadline = Date.now() + TRAILING_FAULT_MS;
  while (Date.now() < deadline && runner.running() && !(await world.fired(armed.run))) await pause(50);
  if (isKill(armed.fault) && (await world.fired(armed.run))) {
    await Promise.race([runner.exit, pause(5_000)]);
  }
}

/** Delivers what a parked shape waits for from outside; true once delivered. */
async function drive(world: ExplorerWorld, shape: Shape, view: ExecutionView, id: string): Promise<boolean> {
  if (view.status !== "waiting") return false;
  const waits = view.waitingFor ?? [];
  try {
    if (shape.driver === "signal" && waits.some((w) => w.kind === "signal" && w.name === "go")) {
      await world.client.signal(id, "go", { value: "go" }, { idempotencyKey: "go" });
      return true;
    }
    const approval = waits.find((w) => w.kind === "approval" && w.name === "release");
    if (shape.driver === "approval" && approval) {
      const hash = (approval.details as { paramsHash?: string } | undefined)?.paramsHash ?? "";
      return await world.approve(id, hash);
    }
  } catch {
    // The execution moved on meanwhile (a kill's takeover, a turn in flight): try again next poll.
  }
  return false;
}

/** The report as printed: points × faults explored, failures with their replayable names, time. */
export function formatReport(report: ExplorerReport): string {
  const lines = [
    `fault-point explorer (${report.mode} form, seed ${report.seed}; FAULT_POINTS_SEED=${report.seed} replays this sample)`,
    "shape                  pg  redis  runs  not-reached  failures",
  ];
  for (const s of report.shapes) {
    lines.push(
      `${s.shape.padEnd(22)} ${String(s.pgPoints).padStart(3)} ${String(s.redisPoints).padStart(6)} ${String(s.runs).padStart(5)} ${String(s.notReached).padStart(12)} ${String(s.failures).padStart(9)}`,
    );
  }
  const points = report.shapes.reduce((n, s) => n + s.pgPoints + s.redisPoints, 0);
  lines.push(
    `${points} points, ${report.runs} runs (clean and faulted), ${report.notReached.length} faults not reached, ` +
      `${report.failures.length} failures, ${report.spawned} runner processes, ${(report.elapsedMs / 1000).toFixed(1)} s`,
  );
  if (report.failures.length > 0) {
    lines.push("failures (replay one with: npm run fault-points -- --only '<name>'):");
    for (const f of report.failures) lines.push(`  ${f.name}\n    ${f.problems.join("\n    ")}`);
  }
  return lines.join("\n");
}
