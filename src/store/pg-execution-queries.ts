import type { Pool } from "pg";
import type { ExecutionQueries, ExecutionView, JournalView } from "../engine/execution-client.js";
import { json } from "./pg-execution-store.js";

/** Read model of executions and signal intake on PostgreSQL. */
export class PgExecutionQueries implements ExecutionQueries {
  constructor(private readonly pool: Pool) {}

  async view(executionId: string): Promise<ExecutionView | null> {
    const { rows } = await this.pool.query(
      `SELECT id, workflow, workflow_version, org_id, status, waiting_for, wake_at, progress, output, failure, hold,
              recovery_attempts, parent_id, created_at, updated_at, completed_at
       FROM executions WHERE id = $1`,
      [executionId],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      id: r.id,
      workflow: r.workflow,
      workflowVersion: r.workflow_version,
      orgId: r.org_id,
      status: r.status,
      waitingFor: r.waiting_for,
      wakeAt: iso(r.wake_at),
      progress: r.progress,
      output: r.output,
      failure: r.failure,
      hold: r.hold,
      recoveryAttempts: r.recovery_attempts,
      parentId: r.parent_id,
      createdAt: iso(r.created_at) as string,
      updatedAt: iso(r.updated_at) as string,
      completedAt: iso(r.completed_at),
    };
  }

  async journal(executionId: string): Promise<JournalView[]> {
    const { rows } = await this.pool.query(
      `SELECT position, kind, name, state, result, error, attempts, started_at, completed_at
       FROM journal_entries WHERE execution_id = $1 ORDER BY position`,
      [executionId],
    );
    return rows.map((r) => ({
      position: r.position,
      kind: r.kind,
      name: r.name,
      state: r.state,
      result: r.result,
      error: r.error,
      attempts: r.attempts,
      startedAt: iso(r.started_at) as string,
      completedAt: iso(r.completed_at),
    }));
  }

  async insertSignal(
    executionId: string,
    name: string,
    payload: unknown,
    idempotencyKey: string | null,
  ): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO signals (execution_id, name, payload, idempotency_key) VALUES ($1, $2, $3::jsonb, $4)
       ON CONFLICT (execution_id, idempotency_key) DO NOTHING`,
      [executionId, name, json(payload ?? null) ?? "null", idempotencyKey],
    );
    return rowCount === 1;
  }
}

function iso(value: Date | null): string | null {
  return value ? value.toISOString() : null;
}
