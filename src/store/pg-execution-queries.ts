import type { Pool, QueryResult, QueryResultRow } from "pg";
import type {
  ExecutionQueries,
  ExecutionView,
  JournalView,
  SignalDelivery,
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

  async insertSignals(signals: readonly SignalDelivery[]): Promise<Set<string>> {
    return insertSignalBatch(this.pool, signals);
  }

  async views(executionIds: readonly string[]): Promise<ExecutionView[]> {
    const { rows } = await this.pool.query(
      `SELECT ${EXECUTION_COLUMNS} FROM executions WHERE id = ANY($1::uuid[])`,
      [executionIds],
    );
    return rows.map((row) => toExecutionRecord(row));
  }
}

/** Where the signal batch runs: the pool, or a transaction whose other writes the signals must share. */
export interface SignalStatementRunner {
  query<R extends QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
}

/**
 * Stores a batch of signals in one statement and returns the executions whose signal was stored
 * now; a repeated idempotency key stores nothing. The join keeps a signal out of a terminal
 * execution, as the single signal() refuses one. Run inside another transaction (a keyed entity's
 * command), the signals commit with that transaction's other effects or not at all.
 */
export async function insertSignalBatch(
  db: SignalStatementRunner,
  signals: readonly SignalDelivery[],
): Promise<Set<string>> {
  const { rows } = await db.query<{ execution_id: string }>(
    `INSERT INTO signals (execution_id, name, payload, idempotency_key)
     SELECT d.execution_id, d.name, d.payload, d.idempotency_key
     FROM unnest($1::uuid[], $2::text[], $3::jsonb[], $4::text[]) AS d(execution_id, name, payload, idempotency_key)
     JOIN executions e ON e.id = d.execution_id AND e.status NOT IN ('completed', 'failed')
     ON CONFLICT (execution_id, idempotency_key) DO NOTHING
     RETURNING execution_id`,
    [
      signals.map((s) => s.executionId),
      signals.map((s) => s.name),
      signals.map((s) => json(s.payload ?? null) ?? "null"),
      signals.map((s) => s.idempotencyKey),
    ],
  );
  return new Set(rows.map((r) => r.execution_id));
}
