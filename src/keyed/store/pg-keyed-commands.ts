import type { PoolClient, QueryResultRow } from "pg";
import type { FailureRecord } from "../../engine/errors.js";
import { json } from "../../store/json-param.js";
import type { ReplyMessage } from "../keyed-names.js";

/**
 * Storage of keyed commands and keyed workflow admissions (docs/keyed.md): one statement per
 * operation, raw `pg` on the hot path like the journal. Arrays travel as text[] and are cast in
 * SQL so `pg` never guesses types. Every function runs on the connection it is given: the pool,
 * or the client of a transaction the caller holds (a claimed batch runs in one).
 */

/** A pool or a checked-out client: whatever the caller's statement must run on. */
export type Queryable = Pick<PoolClient, "query">;

/** First key of the per-(entity, key) insert lock (pg_advisory_xact_lock(int, int)); shard locks use 746001–2. */
const KEY_ORDER_LOCK_NAMESPACE = 746010;

const RESULT_COLUMNS = "id, seq, entity, command, command_id, key, request_hash, status, reply, error";

const KEYED_SQL = {
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

  /** Finished commands among the given ids: the reply poll when a pub/sub wake was lost. */
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

export type KeyedCommandStatus = "queued" | "running" | "done" | "failed";

/** A command row as its sender sees it after the insert (or the earlier insert of the same id). */
export interface KeyedCommand {
  id: string;
  /** Position in the keyed_commands sequence, a bigint in text form. */
  seq: string;
  entity: string;
  command: string;
  commandId: string;
  key: string;
  requestHash: string;
  status: KeyedCommandStatus;
  reply: unknown;
  error: FailureRecord | null;
}

/** A command to insert; `input` is its encoded JSON value. */
export interface NewKeyedCommand {
  id: string;
  entity: string;
  command: string;
  commandId: string;
  key: string;
  /** Most commands of the key running at once. */
  keyLimit: number;
  requestHash: string;
  input: unknown;
}

interface CommandRow {
  id: string;
  seq: string;
  entity: string;
  command: string;
  command_id: string;
  key: string;
  request_hash: string;
  status: KeyedCommandStatus;
  reply: unknown;
  error: FailureRecord | null;
}

function toCommand(row: CommandRow): KeyedCommand {
  return {
    id: row.id,
    seq: row.seq,
    entity: row.entity,
    command: row.command,
    commandId: row.command_id,
    key: row.key,
    requestHash: row.request_hash,
    status: row.status,
    reply: row.reply,
    error: row.error,
  };
}

/** Inserts `commands` in array order (see `insertCommands` above); returns the rows it inserted. */
export async function insertCommands(
  db: Queryable,
  commands: readonly NewKeyedCommand[],
): Promise<KeyedCommand[]> {
  const { rows } = await db.query<CommandRow>(KEYED_SQL.insertCommands, [
    commands.map((c) => c.id),
    commands.map((c) => c.entity),
    commands.map((c) => c.command),
    commands.map((c) => c.commandId),
    commands.map((c) => c.key),
    commands.map((c) => c.keyLimit),
    commands.map((c) => c.requestHash),
    commands.map((c) => json(c.input)),
  ]);
  return rows.map(toCommand);
}

/** The commands with these (entity, command id) pairs, in no particular order. */
export async function findCommands(
  db: Queryable,
  identities: readonly { entity: string; commandId: string }[],
): Promise<KeyedCommand[]> {
  const { rows } = await db.query<CommandRow>(KEYED_SQL.findByCommandIds, [
    identities.map((i) => i.entity),
    identities.map((i) => i.commandId),
  ]);
  return rows.map(toCommand);
}

/** Replies of the commands among `ids` that are done or failed. */
export async function finishedCommands(db: Queryable, ids: readonly string[]): Promise<ReplyMessage[]> {
  const { rows } = await db.query<ReplyMessage>(KEYED_SQL.finished, [ids]);
  return rows;
}

/** A queued row that precedes a sender's own on its key. */
export interface QueuedCommand {
  id: string;
  seq: string;
  entity: string;
  key: string;
  keyLimit: number;
}

/** Queued rows of each `(entity, key)` below its `seq` bound, in seq order. */
export async function queuedBelow(
  db: Queryable,
  bounds: readonly { entity: string; key: string; seq: bigint }[],
): Promise<QueuedCommand[]> {
  const { rows } = await db.query<{
    id: string;
    seq: string;
    entity: string;
    key: string;
    key_limit: number;
  }>(KEYED_SQL.queuedBefore, [
    bounds.map((b) => b.entity),
    bounds.map((b) => b.key),
    bounds.map((b) => b.seq.toString()),
  ]);
  return rows.map((r) => ({ id: r.id, seq: r.seq, entity: r.entity, key: r.key, keyLimit: r.key_limit }));
}

/** A claimed command, locked for the batch that runs it. */
export interface LockedCommand {
  id: string;
  entity: string;
  command: string;
  commandId: string;
  key: string;
  input: unknown;
  status: KeyedCommandStatus;
  reply: unknown;
  error: FailureRecord | null;
  attempts: number;
}

/** Locks the commands among `ids` in seq order (FOR UPDATE) and returns them in that order. */
export async function lockCommands(client: Queryable, ids: readonly string[]): Promise<LockedCommand[]> {
  const { rows } = await client.query<Omit<LockedCommand, "commandId"> & { command_id: string }>(
    KEYED_SQL.lockCommands,
    [ids],
  );
  return rows.map(({ command_id, ...row }) => ({ ...row, commandId: command_id }));
}

/** One key's state row; `state` is its stored (encoded) JSON value. */
export interface KeyedState {
  entity: string;
  key: string;
  state: unknown;
}

/** Creates the missing state rows (with `state` as the initial value) and locks all of them. */
export async function lockStates(client: Queryable, wanted: readonly KeyedState[]): Promise<KeyedState[]> {
  const { rows } = await client.query<KeyedState>(KEYED_SQL.lockStates, [
    wanted.map((w) => w.entity),
    wanted.map((w) => w.key),
    wanted.map((w) => json(w.state)),
  ]);
  return rows;
}

/** How one command of a batch ended; `failedAttempt` 1 counts an attempt against its limit. */
export interface CommandOutcome {
  id: string;
  status: "queued" | "done" | "failed";
  reply: unknown;
  error: FailureRecord | null;
  failedAttempt: 0 | 1;
}

/** Records a batch's outcomes and its keys' new states in one statement. */
export async function writeOutcomes(
  client: Queryable,
  outcomes: readonly CommandOutcome[],
  states: readonly KeyedState[],
): Promise<void> {
  await client.query(KEYED_SQL.writeOutcomes, [
    outcomes.map((o) => o.id),
    outcomes.map((o) => o.status),
    outcomes.map((o) => json(o.reply)),
    outcomes.map((o) => json(o.error)),
    outcomes.map((o) => o.failedAttempt),
    states.map((s) => s.entity),
    states.map((s) => s.key),
    states.map((s) => json(s.state)),
  ]);
}

/**
 * A handler's own statements (`ctx.query`) run under one savepoint per command, so a refused
 * command rolls back only its writes and the batch's transaction goes on.
 */
const HANDLER_SAVEPOINT = "keyed_command";

export async function openHandlerSavepoint(client: Queryable): Promise<void> {
  await client.query(`SAVEPOINT ${HANDLER_SAVEPOINT}`);
}

export async function releaseHandlerSavepoint(client: Queryable): Promise<void> {
  await client.query(`RELEASE SAVEPOINT ${HANDLER_SAVEPOINT}`);
}

export async function rollbackHandlerSavepoint(client: Queryable): Promise<void> {
  await client.query(`ROLLBACK TO SAVEPOINT ${HANDLER_SAVEPOINT}`);
}

/** Runs a handler's statement, as it wrote it, in the batch's transaction. */
export function runHandlerStatement<R extends QueryResultRow>(
  client: Queryable,
  text: string,
  values?: unknown[],
) {
  return client.query<R>(text, values);
}

/** A row the repair offers to Redis again. */
export interface RepairCandidate {
  id: string;
  seq: string;
  entity: string;
  key: string;
  keyLimit: number;
  status: KeyedCommandStatus;
}

/** One page of rows for the repair (see `pageForRepair` above), oldest first. */
export async function pageForRepair(
  db: Queryable,
  page: { statuses: readonly string[]; workflows: boolean; afterSeq: string; graceMs: number; limit: number },
): Promise<RepairCandidate[]> {
  const { rows } = await db.query<{
    id: string;
    seq: string;
    entity: string;
    key: string;
    key_limit: number;
    status: KeyedCommandStatus;
  }>(KEYED_SQL.pageForRepair, [page.statuses, page.workflows, page.afterSeq, page.graceMs, page.limit]);
  return rows.map((r) => ({
    id: r.id,
    seq: r.seq,
    entity: r.entity,
    key: r.key,
    keyLimit: r.key_limit,
    status: r.status,
  }));
}

/** A keyed workflow execution's place in its key's line. */
export interface Admission {
  seq: string;
  status: string;
}

/**
 * Admits a keyed workflow execution; returns the new admission, or undefined when it was
 * admitted before (then `readAdmission` has it).
 */
export async function insertAdmission(
  db: Queryable,
  request: { executionId: string; workflow: string; key: string; limit: number },
): Promise<Admission | undefined> {
  const { rows } = await db.query<Admission>(KEYED_SQL.insertAdmission, [
    request.executionId,
    request.workflow,
    request.key,
    request.limit,
  ]);
  return rows[0];
}

export async function readAdmission(
  db: Queryable,
  executionId: string,
): Promise<(Admission & { key: string }) | undefined> {
  const { rows } = await db.query<Admission & { key: string }>(KEYED_SQL.admission, [executionId]);
  return rows[0];
}

/** What starting one promoted admission found: null columns for a row (or execution) that is gone. */
export interface AdmissionStart {
  id: string;
  workflow: string | null;
  executionStatus: string | null;
  admissionStatus: string | null;
}

/** Starts the promoted admissions among `ids` (see `startAdmissions` above), one result per id. */
export async function startAdmissions(db: Queryable, ids: readonly string[]): Promise<AdmissionStart[]> {
  const { rows } = await db.query<{
    id: string;
    workflow: string | null;
    execution_status: string | null;
    admission_status: string | null;
  }>(KEYED_SQL.startAdmissions, [ids]);
  return rows.map((r) => ({
    id: r.id,
    workflow: r.workflow,
    executionStatus: r.execution_status,
    admissionStatus: r.admission_status,
  }));
}

/** Ends an execution's admission; returns its key, or undefined when it held none. */
export async function finishAdmission(db: Queryable, executionId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ key: string }>(KEYED_SQL.finishAdmission, [executionId]);
  return rows[0]?.key;
}

/** Rewrites the `ahead` count of every execution still queued on `key`. */
export async function refreshAhead(db: Queryable, key: string): Promise<void> {
  await db.query(KEYED_SQL.refreshAhead, [key]);
}

/** An in-flight admission as the repair judges it: null columns for rows that are gone. */
export interface AdmissionInspection {
  id: string;
  admissionStatus: string | null;
  key: string | null;
  executionStatus: string | null;
  workflow: string | null;
}

export async function inspectAdmissions(
  db: Queryable,
  ids: readonly string[],
): Promise<AdmissionInspection[]> {
  const { rows } = await db.query<{
    id: string;
    admission_status: string | null;
    key: string | null;
    execution_status: string | null;
    workflow: string | null;
  }>(KEYED_SQL.inspectAdmissions, [ids]);
  return rows.map((r) => ({
    id: r.id,
    admissionStatus: r.admission_status,
    key: r.key,
    executionStatus: r.execution_status,
    workflow: r.workflow,
  }));
}

/** Keyed executions older than `graceMs` whose admission row was never written, at most `limit`. */
export async function unadmittedExecutions(
  db: Queryable,
  graceMs: number,
  limit: number,
): Promise<{ id: string; workflow: string; key: string }[]> {
  const { rows } = await db.query<{ id: string; workflow: string; key: string }>(
    KEYED_SQL.unadmittedExecutions,
    [graceMs, limit],
  );
  return rows;
}
