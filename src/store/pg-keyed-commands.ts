/**
 * SQL of keyed commands (docs/keyed.md), one statement per operation, raw `pg` on the hot path
 * like the journal. Arrays travel as text[] and are cast in SQL so `pg` never guesses types.
 */

/** First key of the per-(entity, key) insert lock (pg_advisory_xact_lock(int, int)); shard locks use 746001–2. */
const KEY_ORDER_LOCK_NAMESPACE = 746010;

const RESULT_COLUMNS = "id, seq, entity, command, command_id, key, request_hash, status, reply, error";

export const KEYED_SQL = {
  /**
   * Inserts new commands in array order (their seq follows it); existing command ids are skipped.
   * First takes a transaction advisory lock per (entity, key), in a fixed order: inserts of one key
   * commit one after the other, so per key the committed order is the seq order, and a sender that
   * reads its key's queued rows after its own commit sees every lower seq (docs/keyed.md, "Order").
   */
  insertCommands: `
    WITH locked AS (
      SELECT count(*) AS n FROM (
        SELECT pg_advisory_xact_lock(${KEY_ORDER_LOCK_NAMESPACE}, hashtext(k.entity || '/' || k.key))
        FROM (SELECT DISTINCT entity, key FROM unnest($2::text[], $5::text[]) AS u(entity, key)
              ORDER BY entity, key) k
      ) l
    )
    INSERT INTO keyed_commands (id, entity, command, command_id, key, key_limit, request_hash, input)
    SELECT id, entity, command, command_id, key, key_limit, request_hash, input::jsonb
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::text[])
      WITH ORDINALITY AS t(id, entity, command, command_id, key, key_limit, request_hash, input, ord),
      locked
    ORDER BY ord
    ON CONFLICT (entity, command_id) DO NOTHING
    RETURNING ${RESULT_COLUMNS}`,

  /**
   * Queued commands of the given keys below each key's seq bound: rows whose sender committed and
   * died before enqueueing them. The next sender of the key enqueues them with its own, so they
   * keep their place (Redis orders a lane by seq).
   */
  queuedBefore: `
    SELECT k.id, k.seq::text AS seq, k.entity, k.key, k.key_limit FROM keyed_commands k
    JOIN unnest($1::text[], $2::text[], $3::bigint[]) AS u(entity, key, below)
      ON k.entity = u.entity AND k.key = u.key AND k.seq < u.below
    WHERE k.status = 'queued'
    ORDER BY k.seq`,

  findByCommandIds: `
    SELECT ${RESULT_COLUMNS} FROM keyed_commands
    WHERE (entity, command_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,

  /** Finished commands among the given ids: the reply poll when a pub/sub doorbell was lost. */
  finished: `
    SELECT id, status, reply, error FROM keyed_commands
    WHERE id = ANY($1::uuid[]) AND status IN ('done', 'failed')`,

  /** Locks a claimed batch's commands in seq order; a second runner of a redelivered command waits here. */
  lockCommands: `
    SELECT id, entity, command, command_id, key, input, status, reply, error, attempts FROM keyed_commands
    WHERE id = ANY($1::uuid[]) ORDER BY seq FOR UPDATE`,

  /** Creates missing state rows and locks all of them, returning each key's current state. */
  lockStates: `
    INSERT INTO keyed_entity_states (entity, key, state)
    SELECT entity, key, state::jsonb FROM unnest($1::text[], $2::text[], $3::text[]) AS t(entity, key, state)
    ORDER BY entity, key
    ON CONFLICT (entity, key) DO UPDATE SET updated_at = keyed_entity_states.updated_at
    RETURNING entity, key, state`,

  /** Records every outcome of a batch and the keys' new states in one statement. */
  writeOutcomes: `
    WITH c AS (
      UPDATE keyed_commands k
      SET status = u.status::"KeyedCommandStatus", reply = u.reply::jsonb, error = u.error::jsonb,
          attempts = k.attempts + u.failed_attempt,
          completed_at = CASE WHEN u.status IN ('done', 'failed') THEN now() END
      FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::int[])
        AS u(id, status, reply, error, failed_attempt)
      WHERE k.id = u.id
      RETURNING 1
    ), s AS (
      UPDATE keyed_entity_states t SET state = v.state::jsonb, version = t.version + 1, updated_at = now()
      FROM unnest($6::text[], $7::text[], $8::text[]) AS v(entity, key, state)
      WHERE t.entity = v.entity AND t.key = v.key
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM c) AS commands, (SELECT count(*) FROM s) AS states`,

  /**
   * Commands the repair hands to Redis again: queued (and, for a rebuild of keyed workflows,
   * running) rows of one space after a seq cursor, oldest first, older than a grace period.
   */
  pageForRepair: `
    SELECT id, seq::text AS seq, entity, key, key_limit, status FROM keyed_commands
    WHERE status = ANY($1::"KeyedCommandStatus"[]) AND (entity = '@workflow') = $2 AND seq > $3::bigint
      AND created_at < now() - make_interval(secs => $4::float / 1000)
    ORDER BY seq LIMIT $5`,

  /**
   * Admits a keyed workflow execution (its id is the command id); a repeat admission changes
   * nothing. Takes the same per-(entity, key) lock as `insertCommands` (entity `@workflow`), so
   * admissions of one key commit in seq order and the gap fill after the commit is complete.
   */
  insertAdmission: `
    WITH locked AS (
      SELECT pg_advisory_xact_lock(${KEY_ORDER_LOCK_NAMESPACE}, hashtext('@workflow/' || $3::text)) AS l
    )
    INSERT INTO keyed_commands (id, entity, command, command_id, key, key_limit, request_hash, input)
    SELECT $1::uuid, '@workflow', $2, $1::text, $3, $4, '', '{}'::jsonb FROM locked
    ON CONFLICT DO NOTHING
    RETURNING seq::text AS seq, status`,

  admission:
    "SELECT seq::text AS seq, status, key FROM keyed_commands WHERE id = $1 AND entity = '@workflow'",

  /**
   * Starts promoted admissions: the keyed row becomes running and the execution leaves its key
   * wait (only while no turn has run). Returns what the caller must do for each id.
   */
  startAdmissions: `
    WITH k AS (
      UPDATE keyed_commands SET status = 'running'
      WHERE id = ANY($1::uuid[]) AND entity = '@workflow' AND status = 'queued'
      RETURNING id
    ), e AS (
      UPDATE executions x SET status = 'running', waiting_for = NULL, updated_at = now()
      FROM k WHERE x.id = k.id AND x.turn = 0 AND x.status = 'waiting'
      RETURNING x.id
    )
    SELECT i.id, x.workflow, x.status AS execution_status,
           CASE WHEN k.id IS NOT NULL THEN 'running' ELSE a.status::text END AS admission_status
    FROM unnest($1::uuid[]) AS i(id)
    LEFT JOIN k ON k.id = i.id
    LEFT JOIN keyed_commands a ON a.id = i.id
    LEFT JOIN executions x ON x.id = i.id`,

  /** Ends an admission when its execution is terminal; returns the key so the line can move. */
  finishAdmission: `
    UPDATE keyed_commands SET status = 'done', completed_at = now()
    WHERE id = $1 AND entity = '@workflow' AND status IN ('queued', 'running')
    RETURNING key`,

  /**
   * Rewrites the key wait of every execution still queued on a key: `ahead` counts the running
   * ones and the queued ones that arrived earlier.
   */
  refreshAhead: `
    WITH running AS (
      SELECT count(*) AS n FROM keyed_commands WHERE entity = '@workflow' AND key = $1 AND status = 'running'
    ), line AS (
      SELECT id, row_number() OVER (ORDER BY seq) - 1 AS pos FROM keyed_commands
      WHERE entity = '@workflow' AND key = $1 AND status = 'queued'
    )
    UPDATE executions x
    SET waiting_for = jsonb_build_array(jsonb_build_object(
          'kind', 'key', 'name', $1::text, 'details', jsonb_build_object('ahead', line.pos + running.n)))
    FROM line, running
    WHERE x.id = line.id AND x.turn = 0 AND x.status = 'waiting'`,

  /** What the repair needs to judge in-flight admissions Redis has held for a while. */
  inspectAdmissions: `
    SELECT i.id, a.status::text AS admission_status, a.key, x.status::text AS execution_status, x.workflow
    FROM unnest($1::uuid[]) AS i(id)
    LEFT JOIN keyed_commands a ON a.id = i.id AND a.entity = '@workflow'
    LEFT JOIN executions x ON x.id = i.id`,

  /** Keyed executions whose admission row was never written (a crash between the two inserts). */
  unadmittedExecutions: `
    SELECT x.id, x.workflow, x.key FROM executions x
    WHERE x.turn = 0 AND x.status = 'waiting' AND x.key IS NOT NULL
      AND x.updated_at < now() - make_interval(secs => $1::float / 1000)
      AND NOT EXISTS (SELECT 1 FROM keyed_commands a WHERE a.id = x.id)
    LIMIT $2`,
} as const;
