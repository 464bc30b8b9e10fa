import type { Pool } from "pg";
import type { JournalEntry } from "../engine/execution-store.js";
import { type RawEntry, toEntry } from "./pg-execution-store.js";

/** An execution that has not finished, with what a replay needs: its input and whole journal. */
export interface InFlightExecution {
  id: string;
  orgId: string;
  workflow: string;
  workflowVersion: number;
  status: string;
  input: unknown;
  journal: JournalEntry[];
}

/** How many executions' journals are read per round trip. */
const PAGE = 200;

/**
 * Every execution not yet completed or failed, oldest first, each with its whole journal (one
 * query per page of executions, not one per execution). Read-only: used by the compatibility
 * report, across organisations.
 */
export async function* inFlightExecutions(pool: Pool): AsyncGenerator<InFlightExecution> {
  let after: { createdAt: Date; id: string } | null = null;
  for (;;) {
    const page: {
      rows: {
        id: string;
        org_id: string;
        workflow: string;
        workflow_version: number;
        status: string;
        input: unknown;
        created_at: Date;
      }[];
    } = await pool.query(
      `SELECT id, org_id, workflow, workflow_version, status::text AS status, input, created_at FROM executions
         WHERE status NOT IN ('completed', 'failed')
           AND ($1::timestamptz IS NULL OR (created_at, id) > ($1::timestamptz, $2::uuid))
         ORDER BY created_at, id LIMIT $3`,
      [after?.createdAt ?? null, after?.id ?? null, PAGE],
    );
    if (page.rows.length === 0) return;
    const ids = page.rows.map((r) => r.id);
    const journal = await pool.query<RawEntry & { execution_id: string }>(
      `SELECT execution_id, position, kind::text AS kind, name, state::text AS state, result, error, attempts, seq, cause
       FROM journal_entries WHERE execution_id = ANY($1::uuid[]) ORDER BY execution_id, position`,
      [ids],
    );
    const byExecution = new Map<string, JournalEntry[]>();
    for (const row of journal.rows) {
      const entries = byExecution.get(row.execution_id) ?? [];
      entries.push(toEntry(row));
      byExecution.set(row.execution_id, entries);
    }
    for (const r of page.rows) {
      yield {
        id: r.id,
        orgId: r.org_id,
        workflow: r.workflow,
        workflowVersion: r.workflow_version,
        status: r.status,
        input: r.input,
        journal: byExecution.get(r.id) ?? [],
      };
    }
    const last = page.rows.at(-1);
    if (!last || page.rows.length < PAGE) return;
    after = { createdAt: last.created_at, id: last.id };
  }
}

/** The workflow versions that unfinished executions run on, with how many run on each. */
export async function inFlightVersions(
  pool: Pool,
): Promise<{ workflow: string; version: number; executions: number }[]> {
  const { rows } = await pool.query<{ workflow: string; workflow_version: number; n: string }>(
    `SELECT workflow, workflow_version, count(*) AS n FROM executions
     WHERE status NOT IN ('completed', 'failed') GROUP BY workflow, workflow_version ORDER BY workflow, workflow_version`,
  );
  return rows.map((r) => ({ workflow: r.workflow, version: r.workflow_version, executions: Number(r.n) }));
}
