import type { Pool } from "pg";
import type {
  ExecutionQueries,
  ExecutionView,
  JournalView,
  SignalSender,
} from "../engine/execution-client.js";
import { json } from "./json-param.js";
import { EXECUTION_COLUMNS, iso, toExecutionRecord } from "./pg-execution-reads.js";

/** Read model of executions and signal intake on PostgreSQL. */
export class PgExecutionQueries implements ExecutionQueries {
  constructor(private readonly pool: Pool) {}

  async view(executionId: string): Promise<ExecutionView | null> {
    const { rows } = await this.pool.query(`SELECT ${EXECUTION_COLUMNS} FROM executions WHERE id = $1`, [
      executionId,
    ]);
    return rows[0] ? toExecutionRecord(rows[0]) : null;
  }

  async journal(executionId: string): Promise<JournalView[]> {
    const { rows } = await this.pool.query(
      `SELECT position, kind, name, state, result, error, attempts, seq, cause, started_at, completed_at
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
      seq: r.seq,
      cause: r.cause,
      startedAt: iso(r.started_at) as string,
      completedAt: iso(r.completed_at),
    }));
  }

  async insertSignal(
    executionId: string,
    name: string,
    payload: unknown,
    idempotencyKey: string | null,
    sentBy: SignalSender | null = null,
  ): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO signals (execution_id, name, payload, idempotency_key, sent_by) VALUES ($1, $2, $3::jsonb, $4, $5::jsonb)
       ON CONFLICT (execution_id, idempotency_key) DO NOTHING`,
      [executionId, name, json(payload ?? null) ?? "null", idempotencyKey, sentBy ? json(sentBy) : null],
    );
    return rowCount === 1;
  }
}
