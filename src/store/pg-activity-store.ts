import type { Pool } from "pg";
import { ENGINE_ERRORS } from "../engine/error-codes.js";
import type { FailureRecord } from "../engine/errors.js";
import { isDataError } from "./journal-batcher.js";
import { json } from "./json-param.js";

/**
 * What the activity worker reads and writes: the journaled input of a pending activity position,
 * and that position's outcome. Resolution happens once (`state = 'pending'` guards it), so a job
 * BullMQ ran twice cannot record two outcomes; the first one stands.
 */
export class PgActivityStore {
  constructor(private readonly pool: Pool) {}

  /** The step name and encoded input of a pending activity position; null once it has an outcome. */
  async pendingInput(
    executionId: string,
    position: number,
  ): Promise<{ step: string; input: unknown } | null> {
    const { rows } = await this.pool.query(
      "SELECT name, result FROM journal_entries WHERE execution_id = $1 AND position = $2 AND state = 'pending'",
      [executionId, position],
    );
    const row = rows[0] as { name: string; result: { input?: unknown } | null } | undefined;
    return row ? { step: row.name, input: row.result?.input ?? null } : null;
  }

  /**
   * Records the outcome; false when another run of the job recorded one first. An outcome
   * PostgreSQL refuses for its data (SQLSTATE classes 22, 23, 54: `\u0000` in text, ...) is
   * recorded instead as the error RESULT_NOT_STORABLE naming the step: a data error is not
   * transient, and failing the job would only suspend the execution and run the activity again.
   */
  async resolve(
    executionId: string,
    position: number,
    outcome:
      | { state: "ok"; result: unknown; attempts: number }
      | { state: "error"; error: FailureRecord; attempts: number },
  ): Promise<boolean> {
    const { rowCount } = await this.pool
      .query(
        `UPDATE journal_entries
       SET state = $3::"JournalState", result = $4::jsonb, error = $5::jsonb, attempts = $6, completed_at = now()
       WHERE execution_id = $1 AND position = $2 AND state = 'pending'`,
        [
          executionId,
          position,
          outcome.state,
          outcome.state === "ok" ? json(outcome.result) : null,
          outcome.state === "error" ? json(outcome.error) : null,
          outcome.attempts,
        ],
      )
      .catch(async (error: unknown) => {
        if (!isDataError(error)) throw error;
        return this.refuse(
          executionId,
          position,
          error as { code: string; message: string },
          outcome.attempts,
        );
      });
    return rowCount === 1;
  }

  private refuse(
    executionId: string,
    position: number,
    cause: { code: string; message: string },
    attempts: number,
  ): Promise<{ rowCount: number | null }> {
    return this.pool.query(
      `UPDATE journal_entries
       SET state = 'error', result = NULL, attempts = $5, completed_at = now(),
           error = jsonb_build_object(
             'name', 'BusinessError', 'code', $6::text, 'retryable', false,
             'message', 'step "' || name || '" at position ' || position ||
               ' produced a value PostgreSQL cannot store (SQLSTATE ' || $3 || ': ' || $4 ||
               '); it fails once and is not retried',
             'details', jsonb_build_object('step', name, 'position', position, 'sqlstate', $3::text))
       WHERE execution_id = $1 AND position = $2 AND state = 'pending'`,
      [executionId, position, cause.code, cause.message, attempts, ENGINE_ERRORS.RESULT_NOT_STORABLE],
    );
  }
}
