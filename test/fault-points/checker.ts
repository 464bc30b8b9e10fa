import type { Pool } from "pg";
import type { ExecutionView } from "../../src/engine/execution-client.js";
import { findJournalDefects } from "../chaos/history-checker.js";
import { type FaultKind, handsOver, isDataError, isKill } from "./faults.js";
import type { ExpectedResult } from "./shapes.js";

/**
 * Judges one explorer run against what the clean run established (docs/engine.md, "The
 * fault-point explorer", checker rules). Reads PostgreSQL only; no judgement depends on timing
 * except the bound.
 */

/** How long an execution may stay non-terminal after its run started, in ms. */
export const TERMINAL_BOUND_MS = 30_000;

/**
 * Turns after which an execution still `running` is called looping without waiting out the bound:
 * no shape takes more than 5 turns even when every fault hands it over twice.
 */
export const TURN_BUDGET = 12;

/** Statements that write journal rows (a step's, an activity's, a wait's resolution), by point name. */
const ROW_STATEMENT =
  /^pg:(tenor_append_entr|tenor_resolve_entr|tenor_complete_many|update_journal_entries|insert_into_journal_entries)/;
/** Statements that write a completion's output. */
const COMPLETION_STATEMENT = /^pg:tenor_complete_many/;

export interface RunFacts {
  executionId: string;
  view: ExecutionView;
  /** Milliseconds from the start to the terminal status, or to giving up. */
  elapsedMs: number;
  /** The armed fault, null for a clean run. */
  fault: { point: string; kind: FaultKind } | null;
  /** When (PostgreSQL clock) and in which runner the fault fired; null when the point was not reached. */
  fired: { at: Date; pid: number } | null;
  /** Child executions the clean run created (for the duplicate-child rule). */
  expectedChildren: number;
}

export async function checkRun(pool: Pool, expected: ExpectedResult, facts: RunFacts): Promise<string[]> {
  const problems: string[] = [];
  const { view } = facts;
  if (view.status !== "completed" && view.status !== "failed") {
    const turn = await turnOf(pool, facts.executionId);
    problems.push(
      `non-terminal: still ${view.status} after ${Math.round(facts.elapsedMs / 1000)} s and ${turn} turns` +
        `${view.hold ? ` (hold ${view.hold.code})` : ""}${view.waitingFor?.length ? ` (waiting for ${view.waitingFor.map((w) => `${w.kind}:${w.name}`).join(",")})` : ""}`,
    );
  } else {
    const verdict = judgeResult(expected, view, facts.fault);
    if (verdict) problems.push(verdict);
  }
  problems.push(...(await checkReruns(pool, facts)));
  const { rows: tree } = await pool.query<{
    id: string;
    status: string;
    turn: number;
    parent_id: string | null;
  }>("SELECT id, status::text AS status, turn, parent_id FROM executions WHERE id = $1 OR parent_id = $1", [
    facts.executionId,
  ]);
  const terminal = tree.filter((e) => e.status === "completed" || e.status === "failed");
  problems.push(...(await findJournalDefects(pool, terminal)).map((d) => `journal: ${d}`));
  const children = tree.filter((e) => e.parent_id === facts.executionId).length;
  if (children > facts.expectedChildren) {
    problems.push(`duplicate child: ${children} children, the clean run made ${facts.expectedChildren}`);
  }
  return problems;
}

function describe(view: ExecutionView): string {
  if (view.status === "completed") return `completed ${JSON.stringify(view.output)}`;
  const failure = view.failure;
  return `failed ${failure?.code ?? "?"}: ${JSON.stringify(failure?.message ?? "")}`;
}

/** Null when the result is the expected one or a typed failure the fault explains. */
function judgeResult(expected: ExpectedResult, view: ExecutionView, fault: RunFacts["fault"]): string | null {
  if (matches(expected, view)) return null;
  if (fault && isDataError(fault.kind) && ROW_STATEMENT.test(fault.point)) {
    // A row PostgreSQL refused: the step or activity fails with RESULT_NOT_STORABLE, and a body
    // that settles it sees that error in the place of its value.
    if (view.status === "failed" && view.failure?.code === "RESULT_NOT_STORABLE") return null;
    if (COMPLETION_STATEMENT.test(fault.point) && view.status === "failed") {
      if (view.failure?.code === "OUTPUT_NOT_STORABLE") return null;
    }
    if (expected.status === "completed" && view.status === "completed") {
      if (sameWithRefusals(expected.output, view.output)) return null;
    }
  }
  const wanted =
    expected.status === "completed"
      ? `completed ${JSON.stringify(expected.output)}`
      : `failed ${expected.code}${expected.escaped ? " (escaped recorded)" : ""}`;
  return `result: ${describe(view)}; expected ${wanted}`;
}

function matches(expected: ExpectedResult, view: ExecutionView): boolean {
  if (expected.status === "completed") {
    return view.status === "completed" && JSON.stringify(view.output) === JSON.stringify(expected.output);
  }
  if (view.status !== "failed" || view.failure?.code !== expected.code) return false;
  if (!expected.escaped) return true;
  const record = view.failure as unknown as { escaped?: unknown; details?: { escaped?: unknown } };
  const escaped = record.escaped ?? record.details?.escaped;
  return Array.isArray(escaped) && escaped.length > 0;
}

/** Equal, except that a branch's `ok:<value>` may have become `error:RESULT_NOT_STORABLE`. */
function sameWithRefusals(expected: unknown, actual: unknown): boolean {
  if (typeof expected === "string" && typeof actual === "string") {
    return expected === actual || (expected.startsWith("ok:") && actual === "error:RESULT_NOT_STORABLE");
  }
  if (Array.isArray(expected) && Array.isArray(actual)) {
    return expected.length === actual.length && expected.every((e, i) => sameWithRefusals(e, actual[i]));
  }
  if (expected && actual && typeof expected === "object" && typeof actual === "object") {
    const keys = Object.keys(expected);
    return (
      keys.length === Object.keys(actual).length &&
      keys.every((k) => sameWithRefusals((expected as never)[k], (actual as never)[k]))
    );
  }
  return expected === actual;
}

/**
 * A step's (or activity's) work may run again only when the fault hands the turn over (a kill, a
 * terminated PostgreSQL connection, a dropped Redis connection) and fell inside that step's
 * window: after the earlier run's body started and before its checkpoint (the journal row of that
 * name) committed. A kill is recorded just before the process dies, so for a kill the window's
 * start is "the earlier run was in the killed process" (a body may start between the record and
 * the death).
 */
async function checkReruns(pool: Pool, facts: RunFacts): Promise<string[]> {
  const { rows } = await pool.query<{ execution_id: string; step: string; at: Date; pid: number }>(
    `SELECT r.execution_id, r.step, r.at, r.pid FROM fp_step_runs r JOIN executions e ON e.id = r.execution_id
     WHERE e.id = $1 OR e.parent_id = $1 ORDER BY r.n`,
    [facts.executionId],
  );
  const byStep = new Map<string, typeof rows>();
  for (const row of rows) {
    const key = `${row.execution_id}\u0001${row.step}`;
    byStep.set(key, [...(byStep.get(key) ?? []), row]);
  }
  const problems: string[] = [];
  for (const runs of byStep.values()) {
    if (runs.length < 2) continue;
    const first = runs[0] as (typeof rows)[number];
    const checkpoint = await checkpointAt(pool, first.execution_id, first.step);
    for (let i = 1; i < runs.length; i++) {
      const earlier = runs[i - 1] as (typeof rows)[number];
      const { fault, fired } = facts;
      const started =
        fault !== null &&
        fired !== null &&
        (isKill(fault.kind) ? earlier.pid === fired.pid : fired.at >= earlier.at);
      const explained =
        fault !== null &&
        fired !== null &&
        handsOver(fault.kind) &&
        started &&
        (checkpoint === null || fired.at.getTime() <= checkpoint.getTime());
      if (!explained) {
        const where = first.execution_id === facts.executionId ? "" : ` (child ${first.execution_id})`;
        problems.push(
          `re-run: step ${first.step}${where} ran ${runs.length} times (pids ${runs.map((r) => r.pid).join(",")}, ` +
            `at ${runs.map((r) => r.at.toISOString().slice(11, 23)).join(", ")}; checkpoint ${checkpoint?.toISOString().slice(11, 23) ?? "none"}` +
            `${facts.fired ? `; fault at ${facts.fired.at.toISOString().slice(11, 23)} in pid ${facts.fired.pid}` : "; no fault fired"})`,
        );
        break;
      }
    }
  }
  return problems;
}

async function checkpointAt(pool: Pool, executionId: string, step: string): Promise<Date | null> {
  const { rows } = await pool.query<{ completed_at: Date | null }>(
    "SELECT completed_at FROM journal_entries WHERE execution_id = $1 AND name = $2 AND state <> 'pending' ORDER BY position LIMIT 1",
    [executionId, step],
  );
  return rows[0]?.completed_at ?? null;
}

export async function turnOf(pool: Pool, executionId: string): Promise<number> {
  const { rows } = await pool.query<{ turn: number }>("SELECT turn FROM executions WHERE id = $1", [
    executionId,
  ]);
  return rows[0]?.turn ?? 0;
}
