import type { Pool } from "pg";
import type { FailureRecord } from "../engine/errors.js";
import { json } from "./pg-execution-store.js";

/**
 * What the activity worker reads and writes: the journaled input of a pending activity position,
 * and that position's outcome. Resolution happens once (`state = 'pending'` guards it), so a job
 * BullMQ ran twice cannot record two outcomes; the first one stands.
 */
export class PgActivityStore {
  constructor(private readonly pool: Pool) {}

  /** The encoded input of a pending activity position; null once it has an outcome. */
  async pendingInput(executionId: string, position: number): Promise<{ input: unknown } | null> {
    const { rows } = await this.pool.query(
      "SELECT result FROM journal_entries WHERE execution_id = $1 AND position = $2 AND state = 'pending'",
      [executionId, position],
    );
    const row = rows[0] as { result: { input?: unknown } | null } | undefined;
    return row ? { input: row.result?.input ?? null } : null;
  }

  /** Records the outcome; false when another run of the job recorded one first. */
  async resolve(
    executionId: string,
    position: number,
    outcome:
      | { state: "ok"; result: unknown; attempts: number }
      | { state: "error"; error: FailureRecord; attempts: number },
  ): Promise<boolean> {
    const { rowCount } = await this.pool.query(
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
    );
    return rowCount === 1;
  }
}
