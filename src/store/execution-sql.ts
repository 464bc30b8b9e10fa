/**
 * The SQL of the engine's store, one statement per operation. Parameters $1 and $2 of every
 * fenced statement are the execution id and the turn it carries.
 */

const SUMMARY_COLUMNS = "id, workflow, org_id, status, output, failure, request_hash, parent_id";

const TERMINAL_RESET =
  "waiting_for = NULL, wake_at = NULL, hold = NULL, recovery_attempts = 0, suspended_since = NULL";

/**
 * Wraps a fenced terminal update (`... RETURNING id`) so the same statement closes the positions
 * still pending (a timer, signal, activity or child the body no longer awaits): they become
 * `cancelled`, so the journal never shows a wait that can no longer end. Nothing resolves them
 * later: every resolution requires `state = 'pending'`. A fenced-out update closes nothing.
 */
function closingPending(terminalUpdate: string): string {
  return `
    WITH ended AS (${terminalUpdate}),
    closed AS (
      UPDATE journal_entries j SET state = 'cancelled', completed_at = now()
      FROM ended WHERE j.execution_id = ended.id AND j.state = 'pending'
    )
    SELECT id FROM ended`;
}

export const SQL = {
  /**
   * Takes the next turn (the fencing token) of each execution of $1 (an id array: the turns that
   * begin in one tick, a fan-out's children, share it). It waits for the row locks of a previous
   * turn's writes in flight; the journal is read by the next statement, whose snapshot therefore
   * holds every row those writes committed. One statement cannot do both: under READ COMMITTED a
   * subquery on another table keeps the snapshot taken before the wait. Rows are locked in id
   * order, so two batches that share executions wait for each other instead of deadlocking; a row
   * that became terminal while its lock was awaited is re-checked and skipped. `previous_status`
   * is the status the turn found: `waiting` means the last turn parked cleanly, unless it parked
   * on a pause (`parked_paused`), which may have been a turn that ran no body after one that crashed.
   */
  beginTurns: `
    UPDATE executions e SET turn = e.turn + 1, status = 'running', updated_at = now()
    FROM (SELECT id, status, waiting_for FROM executions
          WHERE id = ANY($1::uuid[]) AND status NOT IN ('completed', 'failed')
          ORDER BY id FOR UPDATE) taken
    WHERE e.id = taken.id
    RETURNING e.id, e.workflow, e.workflow_version, e.org_id, e.input, e.turn, e.recovery_attempts,
              e.suspended_since, e.parent_id, e.created_at, e.cancel_requested_at, e.cancel_requested_by,
              e.cancel_reason, e.paused, taken.status AS previous_status,
              COALESCE(taken.waiting_for @> '[{"kind": "pause"}]'::jsonb, false) AS parked_paused`,

  /**
   * The whole journals of the executions of $1 that beginTurns took, read right after it in the
   * same round trip; none for an execution whose turn was not taken (terminal or missing).
   */
  loadJournalsIfTaken: `
    SELECT j.execution_id, j.position, j.kind, j.name, j.state, j.result, j.error, j.attempts, j.seq, j.cause
    FROM journal_entries j
    WHERE j.execution_id = ANY($1::uuid[])
      AND EXISTS (SELECT 1 FROM executions x WHERE x.id = j.execution_id AND x.status = 'running')
    ORDER BY j.execution_id, j.position`,

  /** The current fencing token: a runner that stalled compares it with its own before new work. */
  currentTurn: "SELECT turn FROM executions WHERE id = $1",

  /** The current fencing token and pause: a long turn reads both before a step's work. */
  turnControl: "SELECT turn, paused FROM executions WHERE id = $1",

  /** Appends many positions of many executions at once; only rows whose fence holds are written. */
  appendEntries: `
    WITH input AS (
      SELECT * FROM unnest($1::uuid[], $2::int[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[],
                           $10::int[], $11::int[])
        AS t(execution_id, turn, position, kind, name, state, result, error, attempts, seq, cause)
    ), fenced AS (
      SELECT i.* FROM input i JOIN executions e ON e.id = i.execution_id AND e.turn = i.turn
      FOR SHARE OF e
    )
    INSERT INTO journal_entries (execution_id, position, kind, name, state, result, error, attempts, turn, completed_at,
                                 seq, cause)
    SELECT execution_id, position, kind::"JournalKind", name, state::"JournalState", result::jsonb, error::jsonb,
           attempts, turn, CASE WHEN state = 'pending' THEN NULL ELSE now() END, seq, cause
    FROM fenced
    ON CONFLICT DO NOTHING
    RETURNING execution_id, position`,

  /** The single-row form of appendEntries: the common serial case, planned once per connection. */
  appendEntry: `
    INSERT INTO journal_entries (execution_id, position, kind, name, state, result, error, attempts, turn, completed_at,
                                 seq, cause)
    SELECT e.id, $3, $4::"JournalKind", $5, $6::"JournalState", $7::jsonb, $8::jsonb, $9, e.turn,
           CASE WHEN $6 = 'pending' THEN NULL ELSE now() END, $10, $11
    FROM executions e WHERE e.id = $1 AND e.turn = $2
    FOR SHARE
    ON CONFLICT DO NOTHING
    RETURNING execution_id, position`,

  /** $7: the delivery number of the outcome. */
  resolveEntry: `
    UPDATE journal_entries j
    SET state = $4::"JournalState", result = $5::jsonb, error = $6::jsonb, turn = $2, completed_at = now(), seq = $7
    FROM (SELECT id FROM executions WHERE id = $1 AND turn = $2 FOR SHARE) e
    WHERE j.execution_id = e.id AND j.position = $3 AND j.state = 'pending'`,

  /** Numbers an outcome an activity worker recorded, the first time a turn delivers it. */
  numberDelivery: `
    UPDATE journal_entries j SET seq = $4
    FROM (SELECT id FROM executions WHERE id = $1 AND turn = $2 FOR SHARE) e
    WHERE j.execution_id = e.id AND j.position = $3 AND j.state <> 'pending' AND j.seq IS NULL`,

  lockFence: "SELECT 1 FROM executions WHERE id = $1 AND turn = $2 FOR SHARE",

  /**
   * The row this turn wrote or resolved at a position. A write retried after its reply was lost
   * (the connection died after the commit) finds its own row here instead of reading a fence.
   */
  entryOfTurn:
    "SELECT state, result, seq FROM journal_entries WHERE execution_id = $1 AND turn = $2 AND position = $3",

  /** The oldest unconsumed signal of a name, consumed into a position (arrival order, once). */
  takeSignal: `
    UPDATE signals SET consumed_at = now(), consumed_position = $3
    WHERE id = (
      SELECT id FROM signals WHERE execution_id = $1 AND name = $2 AND consumed_at IS NULL
      ORDER BY id LIMIT 1 FOR UPDATE
    )
    RETURNING payload`,

  /**
   * Inserts the starts of one tick (src/store/execution-creation.ts) in one statement: a keyed
   * workflow's start is created `waiting` for its key (docs/keyed.md), any other `running`. Rows go in the order of (org, idempotency key, call), so two batches that share keys
   * wait for each other instead of deadlocking, and of two starts with one key in a batch the
   * earlier call wins, as it would one after the other. A row that conflicts (its id, or its org's
   * idempotency key, taken before or earlier in the same batch) is skipped; its caller then reads
   * the existing execution with findExistingMany.
   */
  insertExecutions: `
    INSERT INTO executions (id, workflow, workflow_version, org_id, key, idempotency_key, request_hash, input,
                            parent_id, parent_position, status, created_by, idempotency_expires_at, waiting_for,
                            traceparent)
    SELECT id, workflow, workflow_version, org_id, key, idempotency_key, request_hash, input::jsonb, parent_id,
           parent_position, CASE WHEN waiting_for IS NULL THEN 'running' ELSE 'waiting' END::"ExecutionStatus",
           created_by, idempotency_expires_at, waiting_for::jsonb, traceparent
    FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                $9::uuid[], $10::int[], $11::uuid[], $12::timestamptz[], $13::text[], $14::text[])
      WITH ORDINALITY AS t(id, workflow, workflow_version, org_id, key, idempotency_key, request_hash, input,
                           parent_id, parent_position, created_by, idempotency_expires_at, waiting_for, traceparent,
                           ord)
    ORDER BY org_id, idempotency_key NULLS LAST, ord
    ON CONFLICT DO NOTHING
    RETURNING ${SUMMARY_COLUMNS}`,

  /**
   * Inserts the children of one tick: each child is created only while its parent's turn ($11) is
   * current, and inherits the parent's initiator (created_by), so the root's initiator cannot
   * approve inside it.
   */
  insertChildExecutions: `
    WITH input AS (
      SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[],
                           $8::text[], $9::uuid[], $10::int[], $11::int[], $12::text[])
        AS t(id, workflow, workflow_version, org_id, key, idempotency_key, request_hash, input, parent_id,
             parent_position, parent_turn, traceparent)
    ), fenced AS (
      SELECT i.*, parent.created_by FROM input i
      JOIN executions parent ON parent.id = i.parent_id AND parent.turn = i.parent_turn
      FOR SHARE OF parent
    )
    INSERT INTO executions (id, workflow, workflow_version, org_id, key, idempotency_key, request_hash, input,
                            parent_id, parent_position, status, created_by, traceparent)
    SELECT id, workflow, workflow_version, org_id, key, idempotency_key, request_hash, input::jsonb, parent_id,
           parent_position, 'running', created_by, traceparent
    FROM fenced ORDER BY id
    ON CONFLICT DO NOTHING
    RETURNING ${SUMMARY_COLUMNS}`,

  /**
   * An expired idempotency key is released before a start that names it: the old execution keeps
   * everything but the key, and the start creates a new one (README, "Idempotency"). $1 orgs, $2
   * keys, pairwise.
   */
  releaseExpiredIdempotencyKeys: `
    UPDATE executions SET idempotency_key = NULL
    WHERE (org_id, idempotency_key) IN (SELECT * FROM unnest($1::text[], $2::text[]))
      AND idempotency_expires_at <= now()`,

  /**
   * For each (id, org, idempotency key) of $1..$3, the execution
   * with that id or that org's key, numbered by its place in the input (`ord`, from 1).
   */
  findExistingMany: `
    SELECT i.ord, found.* FROM unnest($1::uuid[], $2::text[], $3::text[]) WITH ORDINALITY AS i(id, org, idem, ord)
    CROSS JOIN LATERAL (
      SELECT ${SUMMARY_COLUMNS} FROM executions
      WHERE executions.id = i.id OR (executions.org_id = i.org AND executions.idempotency_key = i.idem)
      LIMIT 1
    ) found`,

  /** The summaries of many executions (a turn's children). */
  summaries: `SELECT ${SUMMARY_COLUMNS} FROM executions WHERE id = ANY($1::uuid[])`,

  /**
   * The batched form of resolveEntry: many positions of many executions, each written only while
   * its turn holds. Rows are taken in (execution, position) order.
   */
  resolveEntries: `
    WITH input AS (
      SELECT * FROM unnest($1::uuid[], $2::int[], $3::int[], $4::text[], $5::text[], $6::text[], $7::int[])
        AS t(execution_id, turn, position, state, result, error, seq)
    ), fenced AS (
      SELECT i.* FROM input i JOIN executions e ON e.id = i.execution_id AND e.turn = i.turn
      ORDER BY i.execution_id, i.position
      FOR SHARE OF e
    )
    UPDATE journal_entries j
    SET state = f.state::"JournalState", result = f.result::jsonb, error = f.error::jsonb, turn = f.turn,
        completed_at = now(), seq = f.seq
    FROM fenced f
    WHERE j.execution_id = f.execution_id AND j.position = f.position AND j.state = 'pending'
    RETURNING j.execution_id, j.position`,

  setProgress:
    "UPDATE executions SET progress = $3::jsonb, updated_at = now() WHERE id = $1 AND turn = $2 RETURNING id",

  /**
   * The completions of one tick ($1 ids, $2 turns, $3 outputs), each applied only while its turn
   * holds, closing pending positions the same way, together with the step rows each body saw
   * before completing ($4..$13, the columns of appendEntries without the turn): a row is written
   * only with its execution's completion, in the same statement. Returns the ids completed.
   */
  completeMany: `
    WITH input AS (
      SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[]) AS t(id, turn, output)
    ), ended AS (
      UPDATE executions e
      SET status = 'completed', output = i.output::jsonb, ${TERMINAL_RESET}, completed_at = now(), updated_at = now()
      FROM input i WHERE e.id = i.id AND e.turn = i.turn
      RETURNING e.id, e.turn
    ), closed AS (
      UPDATE journal_entries j SET state = 'cancelled', completed_at = now()
      FROM ended WHERE j.execution_id = ended.id AND j.state = 'pending'
    ), ahead AS (
      SELECT * FROM unnest($4::uuid[], $5::int[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
                           $11::int[], $12::int[], $13::int[])
        AS t(execution_id, position, kind, name, state, result, error, attempts, seq, cause)
    ), appended AS (
      INSERT INTO journal_entries (execution_id, position, kind, name, state, result, error, attempts, turn,
                                   completed_at, seq, cause)
      SELECT a.execution_id, a.position, a.kind::"JournalKind", a.name, a.state::"JournalState", a.result::jsonb,
             a.error::jsonb, a.attempts, ended.turn, now(), a.seq, a.cause
      FROM ahead a JOIN ended ON ended.id = a.execution_id
      ON CONFLICT DO NOTHING
    )
    SELECT id FROM ended`,

  /** A cancellation is a failure with code CANCELLED: it closes pending positions the same way. */
  fail: closingPending(`
    UPDATE executions SET status = 'failed', failure = $3::jsonb, ${TERMINAL_RESET}, completed_at = now(), updated_at = now()
    WHERE id = $1 AND turn = $2 RETURNING id`),

  /**
   * A run paused while this turn ran (docs/engine.md, "Pause") parks on its pause instead of the
   * turn's waits, with no wake time: its timers and signals are seen by the first turn after the
   * unpause. The pause wait is built as `pauseWait` (src/engine/execution-store.ts) builds it.
   */
  park: `
    UPDATE executions SET status = 'waiting',
                          waiting_for = CASE WHEN paused IS NULL THEN $3::jsonb
                            ELSE jsonb_build_array(jsonb_build_object('kind', 'pause', 'name', 'operator', 'details', paused))
                          END,
                          wake_at = CASE WHEN paused IS NULL THEN $4::timestamptz END, hold = NULL,
                          recovery_attempts = 0, suspended_since = NULL, updated_at = now()
    WHERE id = $1 AND turn = $2 RETURNING id`,

  /**
   * $5: a new outage, which restarts the recovery count and clock. Clears an earlier hold: the
   * turn that suspends replayed past it, and a hold left set would be woken by every starting
   * runner ahead of the recovery back-off (pg-sweep-queries.ts, heldExecutions).
   */
  suspend: `
    UPDATE executions SET status = 'suspended', waiting_for = $3::jsonb, wake_at = $4, hold = NULL,
                          recovery_attempts = CASE WHEN $5::boolean THEN 1 ELSE recovery_attempts + 1 END,
                          suspended_since = CASE WHEN $5::boolean THEN now() ELSE COALESCE(suspended_since, now()) END,
                          updated_at = now()
    WHERE id = $1 AND turn = $2 RETURNING recovery_attempts, suspended_since`,

  hold: `
    UPDATE executions SET status = 'suspended', hold = $3::jsonb, waiting_for = $4::jsonb, wake_at = $5, updated_at = now()
    WHERE id = $1 AND turn = $2 RETURNING id`,
} as const;
