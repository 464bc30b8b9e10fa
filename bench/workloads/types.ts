import type { BenchEnv } from "../lib/bench-env.js";
import type { DbosSystem } from "../systems/dbos.js";

/**
 * Systems a workload can report. `floor` is the least this machine can spend on the durable work
 * (bench/systems/floor.ts); `floor-serial` is the same work with one commit per step (W1 only).
 */
/**
 * `tenor` is Tenor as deployed (compiled runner processes on product defaults, driven by a library
 * client: bench/systems/tenor-deployed.ts) wherever a workload can run it; `tenor-in-process` is
 * the runner engine inside the bench process, kept beside it where both run (W1, W2, W2C).
 */
export const SYSTEMS = ["floor", "floor-serial", "bullmq", "dbos", "tenor-in-process", "tenor"] as const;
export type SystemName = (typeof SYSTEMS)[number];

export const WORKLOAD_IDS = [
  "W1",
  "W2",
  "W2C",
  "W3",
  "W4",
  "W5",
  "W6",
  "W7",
  "W8",
  "W9",
  "W10",
  "W11",
  "W12",
  "W13",
  "W14",
  "W14IO",
  "W16",
  "W17",
  "P1",
] as const;
export type WorkloadId = (typeof WORKLOAD_IDS)[number];

/** A figure is a number, or numbers by variant (W6: `replayMs` by journal size). */
export type FigureValue = number | Record<string, number>;
export type Figures = Record<string, FigureValue>;

export type SystemResult =
  | { status: "ok"; figures: Figures; details?: Record<string, unknown> }
  | { status: "not-measured" | "unavailable" | "error"; reason: string };

export interface WorkloadResult {
  id: WorkloadId;
  title: string;
  status: "ok" | "unavailable" | "error";
  reason?: string;
  /** What was run: counts, sizes, concurrency, so a reader can reproduce it. */
  params: Record<string, unknown>;
  systems: Partial<Record<SystemName, SystemResult>>;
  durationMs?: number;
}

export interface WorkloadContext {
  env: BenchEnv;
  quick: boolean;
  log(line: string): void;
  /** DBOS, launched on first use (one instance per process); an error string when it cannot run. */
  dbos(): Promise<DbosSystem | { error: string }>;
}

export interface Workload {
  id: WorkloadId;
  title: string;
  run(ctx: WorkloadContext): Promise<WorkloadResult>;
}

/** Runs one system's measurement; a throw becomes `{ status: "error" }` so the other systems still report. */
export async function measure(
  ctx: WorkloadContext,
  label: string,
  fn: () => Promise<SystemResult>,
): Promise<SystemResult> {
  ctx.log(`  ${label} ...`);
  try {
    return await fn();
  } catch (error) {
    const reason = (error as Error)?.message ?? String(error);
    ctx.log(`  ${label} failed: ${reason}`);
    return { status: "error", reason };
  }
}

/** A system that does not apply to a workload, with the reason shown in the report. */
export function notMeasured(reason: string): SystemResult {
  return { status: "not-measured", reason };
}

/** DBOS's result for a workload, or its launch error. */
export async function withDbos(
  ctx: WorkloadContext,
  fn: (dbos: DbosSystem) => Promise<SystemResult>,
): Promise<SystemResult> {
  const dbos = await ctx.dbos();
  if ("error" in dbos) return { status: "unavailable", reason: dbos.error };
  return measure(ctx, "dbos", () => fn(dbos));
}
