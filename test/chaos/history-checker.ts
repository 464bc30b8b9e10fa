import type { Pool } from "pg";

/**
 * Reads what a chaos run left in PostgreSQL and judges it (test/chaos/chaos.int.test.ts):
 *
 * - every started execution (and its child) completed: none lost;
 * - no step body started after its own checkpoint had committed (`late_bodies`, recorded by the
 *   bodies themselves);
 * - a step's work ran more than once only where a fault could explain it: the earlier run's
 *   process was killed or stopped, or a fault (Redis flush, connections terminated) happened
 *   between the two runs — anything else is an illegitimate duplicate;
 * - each journal is whole: positions 0..n-1, none left pending, none written by a turn newer
 *   than the execution's last.
 */

export type FaultKind = "kill" | "stop" | "flush" | "pg-terminate";

/** One injected fault: the process it hit (kill, stop) and when it started and ended (epoch ms). */
export interface Fault {
  kind: FaultKind;
  pid: number | null;
  from: number;
  to: number;
}

export interface HistoryReport {
  lateBodies: { executionId: string; step: string; pid: number }[];
  illegitimateDuplicates: { executionId: string; step: string; runs: { pid: number; at: string }[] }[];
  journalDefects: string[];
  figures: {
    executions: number;
    lostExecutions: number;
    sideEffects: number;
    duplicateRuns: number;
    explainedDuplicates: number;
    illegitimateDuplicates: number;
    lateBodies: number;
    journalPositions: number;
  };
}

interface Run {
  execution_id: string;
  step: string;
  pid: number;
  at: Date;
}

export async function historyReport(pool: Pool, rootIds: string[], faults: Fault[]): Promise<HistoryReport> {
  const { rows: executions } = await pool.query<{ id: string; status: string; turn: number }>(
    "SELECT id, status, turn FROM executions WHERE id = ANY($1::uuid[]) OR parent_id = ANY($1::uuid[])",
    [rootIds],
  );
  const ids = executions.map((e) => e.id);
  const { rows: runs } = await pool.query<Run>(
    "SELECT execution_id, step, pid, at FROM side_effects WHERE execution_id = ANY($1::uuid[]) ORDER BY n",
    [ids],
  );
  const { rows: late } = await pool.query<{ execution_id: string; step: string; pid: number }>(
    "SELECT execution_id, step, pid FROM late_bodies WHERE execution_id = ANY($1::uuid[])",
    [ids],
  );
  const byStep = new Map<string, Run[]>();
  for (const run of runs) {
    const key = `${run.execution_id}/${run.step}`;
    byStep.set(key, [...(byStep.get(key) ?? []), run]);
  }
  let duplicateRuns = 0;
  let explained = 0;
  const illegitimate: HistoryReport["illegitimateDuplicates"] = [];
  for (const stepRuns of byStep.values()) {
    for (let i = 1; i < stepRuns.length; i++) {
      duplicateRuns++;
      if (explainedBy(faults, stepRuns[i - 1] as Run, stepRuns[i] as Run)) {
        explained++;
      } else {
        const first = stepRuns[0] as Run;
        illegitimate.push({
          executionId: first.execution_id,
          step: first.step,
          runs: stepRuns.map((r) => ({ pid: r.pid, at: r.at.toISOString() })),
        });
      }
    }
  }
  const journalDefects = await findJournalDefects(pool, executions);
  const { rows: positions } = await pool.query<{ count: number }>(
    "SELECT count(*)::int AS count FROM journal_entries WHERE execution_id = ANY($1::uuid[])",
    [ids],
  );
  return {
    lateBodies: late.map((l) => ({ executionId: l.execution_id, step: l.step, pid: l.pid })),
    illegitimateDuplicates: illegitimate,
    journalDefects,
    figures: {
      executions: executions.length,
      lostExecutions:
        executions.filter((e) => e.status !== "completed").length +
        (rootIds.length - countRoots(executions, rootIds)),
      sideEffects: runs.length,
      duplicateRuns,
      explainedDuplicates: explained,
      illegitimateDuplicates: illegitimate.length,
      lateBodies: late.length,
      journalPositions: positions[0]?.count ?? 0,
    },
  };
}

function countRoots(executions: { id: string }[], rootIds: string[]): number {
  const present = new Set(executions.map((e) => e.id));
  return rootIds.filter((id) => present.has(id)).length;
}

/**
 * A second run of a step's work is explained when the earlier run's process was killed or stopped
 * at or after the earlier run began, or when a Redis flush or a connection termination happened
 * between the two runs (both hand a turn that was still running to a new one).
 */
function explainedBy(faults: Fault[], earlier: Run, later: Run): boolean {
  const start = earlier.at.getTime();
  const end = later.at.getTime();
  return faults.some((fault) => {
    if (fault.kind === "kill" || fault.kind === "stop") return fault.pid === earlier.pid && fault.to >= start;
    return fault.from <= end && fault.to >= start - 1_000;
  });
}

/** Positions 0..n-1 present, none pending, none from a turn newer than the execution's (also used by test/fault-points). */
export async function findJournalDefects(
  pool: Pool,
  executions: { id: string; turn: number }[],
): Promise<string[]> {
  const defects: string[] = [];
  for (const execution of executions) {
    const { rows } = await pool.query<{ position: number; state: string; turn: number }>(
      "SELECT position, state, turn FROM journal_entries WHERE execution_id = $1 ORDER BY position",
      [execution.id],
    );
    rows.forEach((row, index) => {
      if (row.position !== index) defects.push(`${execution.id}: position ${index} missing`);
      if (row.state === "pending") defects.push(`${execution.id}: position ${row.position} still pending`);
      if (row.turn > execution.turn)
        defects.push(`${execution.id}: position ${row.position} from a future turn`);
    });
  }
  return defects;
}
