import type { PoolClient } from "pg";

/** A run parked on a full nonce window (kind `nonce`), as the window's opener reads it. */
export interface NonceWindowWaiter {
  executionId: string;
  /** The signal its wait consumes. */
  signal: string;
  /** The stored wake's idempotency key (`nonce-window:<execution id>:<signal>`): one wake per wait. */
  idempotencyKey: string;
}

/** A pool, or a client inside a transaction. */
type Queryable = Pick<PoolClient, "query">;

/**
 * Picks the runs waiting for the nonce window `$1` (`<chainId>:<sender>`) that nobody has woken,
 * longest waiting first, at most `$2`, and stores each one's wake signal, in one statement.
 *
 * - The first two conditions are the expressions of `executions_nonce_window_waiters_idx`, written
 *   as the index states them, so PostgreSQL reads that sender's waiters in order from it instead
 *   of unpacking every waiting run's list (migration 20261202134000_nonce_window_waiters_index).
 * - A woken run stays `waiting` in the projection until its next turn, seconds later under load:
 *   `NOT EXISTS` (the signals index `(execution_id, name, id)`) skips it. Without it every release
 *   of the sender in those seconds picked the same longest waiter, its wake was a repeat, and the
 *   freed place stayed empty until some run's own recheck, up to two minutes later.
 * - Releases of one sender come together (one block mines many of its transactions, and their runs
 *   release at once). `FOR UPDATE OF e SKIP LOCKED` gives each concurrent release waiters of its
 *   own: a waiter another release is waking is locked until that release's statement commits.
 *
 * Each wake's idempotency key, `nonce-window:<execution id>:<signal>` (one wake per wait), is built
 * here alone and returned, so the caller's wake names the row this statement stored.
 */
const STORE_NONCE_WINDOW_WAKES_SQL = `
  WITH picked AS (
    SELECT e.id, w->'details'->>'signal' AS signal
    FROM executions e, jsonb_array_elements(e.waiting_for) w
    WHERE e.status = 'waiting'
      AND e.waiting_for @? '$[*] ? (@.kind == "nonce")'
      AND (jsonb_path_query_first(e.waiting_for, '$[*] ? (@.kind == "nonce").name') #>> '{}') = $1
      AND w->>'kind' = 'nonce' AND w->>'name' = $1
      AND w->'details'->>'signal' IS NOT NULL
      AND NOT EXISTS (
        SELECT 1 FROM signals s WHERE s.execution_id = e.id AND s.name = w->'details'->>'signal')
    ORDER BY e.updated_at
    LIMIT $2
    FOR UPDATE OF e SKIP LOCKED)
  INSERT INTO signals (execution_id, name, payload, idempotency_key)
  SELECT id, signal, '{}'::jsonb, 'nonce-window:' || id || ':' || signal FROM picked
  ON CONFLICT (execution_id, idempotency_key) DO NOTHING
  RETURNING execution_id AS id, name AS signal, idempotency_key`;

/**
 * Stores the wake signals of up to `limit` runs waiting for the nonce window `key` and returns
 * them with their idempotency keys (STORE_NONCE_WINDOW_WAKES_SQL); the caller wakes their jobs.
 */
export async function storeNonceWindowWakes(
  db: Queryable,
  key: string,
  limit: number,
): Promise<NonceWindowWaiter[]> {
  const { rows } = await db.query<{ id: string; signal: string; idempotency_key: string }>(
    STORE_NONCE_WINDOW_WAKES_SQL,
    [key, limit],
  );
  return rows.map((r) => ({ executionId: r.id, signal: r.signal, idempotencyKey: r.idempotency_key }));
}
