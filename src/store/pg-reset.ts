import { randomUUID } from "node:crypto";
import type { Pool, PoolClient } from "pg";
import { ENGINE_ERRORS, type EngineErrorCode } from "../engine/error-codes.js";
import type { JournalEntry } from "../engine/execution-store.js";
import type { CancelActor } from "./pg-cancellation.js";
import { type RawEntry, toEntry } from "./pg-execution-store.js";
import { withTransaction } from "./with-transaction.js";

/** What a reset asks (docs/engine.md, "Reset"). */
export interface ResetRequest {
  orgId: string;
  executionId: string;
  /**
   * The first journal position to set aside; 0 ≤ position ≤ the journal's length. A chooser picks
   * it inside the transaction, from the locked journal and the version the run moves to (a bulk
   * reset-to-version: the first position that version does not replay), or refuses the run.
   */
  position: number | ResetPositionChooser;
  reason: string | null;
  actor: CancelActor | null;
  /** The request's Idempotency-Key: a repeat with it answers the first reset again. */
  idempotencyKey: string | null;
  /** SHA-256 of the canonical request, to refuse a key reused for another request. */
  requestHash: string;
  /** The newest registered version of each workflow: the run continues on it. Null when none is. */
  newestVersion(workflow: string): number | null;
  /**
   * Whether `toVersion` replays `prefix` (the positions kept): null when it does, else the refusal.
   * Called inside the transaction, with the run's row locked, so nothing moves while it checks.
   */
  replays(
    run: ResetCandidate,
    toVersion: number,
    prefix: readonly JournalEntry[],
  ): Promise<ResetRefusal | null>;
}

/** Picks a reset's position from the run's locked journal, or refuses the run. */
export type ResetPositionChooser = (
  run: ResetCandidate,
  toVersion: number,
  journal: readonly JournalEntry[],
) => Promise<number | ResetRefusal>;

/** The run a reset looks at. */
export interface ResetCandidate {
  id: string;
  orgId: string;
  workflow: string;
  workflowVersion: number;
  status: string;
  input: unknown;
}

/** One reset as recorded (execution_resets). */
export interface ResetRecord {
  id: string;
  executionId: string;
  position: number;
  fromVersion: number;
  toVersion: number;
  fromStatus: string;
  at: string;
  by: CancelActor | null;
  reason: string | null;
  /** How many journal positions it set aside. */
  setAside: number;
  /** How many signals consumed by those positions were given back, to be consumed again. */
  signalsReturned: number;
}

/** Why a run cannot be reset: a stable code (ENGINE_ERRORS) and the facts that name the rule. */
export interface ResetRefusal {
  code: EngineErrorCode;
  message: string;
  details: Record<string, unknown>;
}

export type ResetResult =
  | { kind: "not-found" }
  | { kind: "refused"; refusal: ResetRefusal }
  /**
   * `duplicate`: the Idempotency-Key named an earlier reset; nothing was done again. `wake`: the
   * caller should wake the run. A repeat wakes only while the run is still `running` (its first
   * wake may have been lost); once a turn has taken it and it waits or ended, a wake would only
   * replay a turn for nothing.
   */
  | { kind: "reset"; workflow: string; reset: ResetRecord; duplicate: boolean; wake: boolean };

/**
 * Resets a held, suspended or failed run (docs/engine.md, "Reset") in one transaction, with the
 * run's row locked: journal positions ≥ `position` move to `journal_set_aside` under a new
 * `execution_resets` row, signals they consumed are given back, the run's version becomes the
 * newest and its status `running` with a new turn (fencing out any turn in flight). The caller
 * wakes the run. A crash before the commit leaves the run exactly as it was.
 */
export async function requestReset(pool: Pool, request: ResetRequest): Promise<ResetResult> {
  return withTransaction(pool, async (client) => {
    const run = await lockRun(client, request.orgId, request.executionId);
    if (!run) return { kind: "not-found" };
    if (request.idempotencyKey !== null) {
      const earlier = await earlierReset(client, request.executionId, request.idempotencyKey);
      if (earlier) {
        if (earlier.requestHash !== request.requestHash) {
          return refused(
            ENGINE_ERRORS.IDEMPOTENCY_KEY_REUSED,
            `Idempotency-Key ${JSON.stringify(request.idempotencyKey)} was used for another reset of execution ${run.id}`,
            { executionId: run.id, idempotencyKey: request.idempotencyKey },
          );
        }
        return {
          kind: "reset",
          workflow: run.workflow,
          reset: earlier.record,
          duplicate: true,
          wake: run.status === "running",
        };
      }
    }
    const journal = await lockJournal(client, run.id);
    const notAllowed = notResettable(run);
    if (notAllowed) return { kind: "refused", refusal: notAllowed };
    const toVersion = request.newestVersion(run.workflow);
    if (toVersion === null) {
      return refused(
        ENGINE_ERRORS.WORKFLOW_VERSION_UNAVAILABLE,
        `no version of workflow ${run.workflow} is registered`,
        {
          workflow: run.workflow,
        },
      );
    }
    const position =
      typeof request.position === "number"
        ? request.position
        : await request.position(run, toVersion, journal);
    if (typeof position !== "number") return { kind: "refused", refusal: position };
    const refusal = outOfRange(run, position, journal.length) ?? dispatchedAtOrAfter(run, position, journal);
    if (refusal) return { kind: "refused", refusal };
    const prefix = journal.filter((e) => e.position < position);
    const replay = await request.replays(run, toVersion, prefix);
    if (replay) return { kind: "refused", refusal: replay };
    const reset = await setAside(client, run, { ...request, position }, toVersion);
    return { kind: "reset", workflow: run.workflow, reset, duplicate: false, wake: true };
  });
}

interface LockedRun extends ResetCandidate {
  cancelled: boolean;
  /** Held for non-determinism or a missing version; `running` then is a retry turn replaying up to the hold. */
  held: boolean;
  parentId: string | null;
  key: string | null;
}

async function lockRun(client: PoolClient, orgId: string, executionId: string): Promise<LockedRun | null> {
  const { rows } = await client.query(
    `SELECT id, org_id, workflow, workflow_version, status::text AS status, input, parent_id, key,
            cancel_requested_at IS NOT NULL AS cancelled, hold IS NOT NULL AS held
     FROM executions WHERE id = $1 AND org_id = $2 FOR UPDATE`,
    [executionId, orgId],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    id: r.id,
    orgId: r.org_id,
    workflow: r.workflow,
    workflowVersion: r.workflow_version,
    status: r.status,
    input: r.input,
    cancelled: r.cancelled,
    held: r.held,
    parentId: r.parent_id,
    key: r.key,
  };
}

async function lockJournal(client: PoolClient, executionId: string): Promise<JournalEntry[]> {
  const { rows } = await client.query<RawEntry>(
    `SELECT position, kind::text AS kind, name, state::text AS state, result, error, attempts, seq, cause
     FROM journal_entries WHERE execution_id = $1 ORDER BY position FOR UPDATE`,
    [executionId],
  );
  return rows.map(toEntry);
}

function refused(code: ResetRefusal["code"], message: string, details: Record<string, unknown>) {
  return { kind: "refused" as const, refusal: { code, message, details } };
}

/**
 * Only a run that stopped moving by itself: suspended (held or in recovery) or failed, or a held
 * run's retry turn (`running` with its hold still set: the reset's new turn number fences that
 * turn out, and it had no new work to do before the hold). A failed run
 * that was cancelled stays cancelled; a failed child has already handed its failure to its parent;
 * a failed keyed run has released its key to the next run in line.
 */
function notResettable(run: LockedRun): ResetRefusal | null {
  const details = { executionId: run.id, status: run.status };
  const heldRetry = run.status === "running" && run.held;
  if (run.status !== "suspended" && run.status !== "failed" && !heldRetry) {
    return {
      code: ENGINE_ERRORS.EXECUTION_NOT_RESETTABLE,
      message: `execution ${run.id} is ${run.status}; only a held, suspended or failed run can be reset`,
      details,
    };
  }
  if (run.status !== "failed") return null;
  const why = run.cancelled
    ? "it was cancelled"
    : run.parentId !== null
      ? `its parent ${run.parentId} has already received its failure`
      : run.key !== null
        ? `its key ${JSON.stringify(run.key)} has passed to the next run`
        : null;
  if (!why) return null;
  return {
    code: ENGINE_ERRORS.EXECUTION_NOT_RESETTABLE,
    message: `execution ${run.id} failed and cannot be reset: ${why}`,
    details: { ...details, rule: why },
  };
}

function outOfRange(run: LockedRun, position: number, length: number): ResetRefusal | null {
  if (position >= 0 && position <= length) return null;
  return {
    code: ENGINE_ERRORS.RESET_POSITION_OUT_OF_RANGE,
    message: `position ${position} is outside execution ${run.id}'s journal: choose 0 to ${length}`,
    details: { executionId: run.id, position, min: 0, max: length },
  };
}

/**
 * A child started, or an activity dispatched, at a position to be set aside would outlive the reset:
 * the child id and the activity's job id derive from the position, so the new code's call there
 * would meet the old child or job. The operator resets at a later position instead.
 */
function dispatchedAtOrAfter(run: LockedRun, position: number, journal: readonly JournalEntry[]) {
  const found = journal.find(
    (e) =>
      e.position >= position &&
      (e.kind === "child" || (e.kind === "step" && (e.state === "pending" || e.state === "cancelled"))),
  );
  if (!found) return null;
  const what = found.kind === "child" ? "a child workflow" : "an activity still in flight";
  return {
    code: ENGINE_ERRORS.RESET_SETS_ASIDE_DISPATCHED,
    message: `position ${found.position} (${found.kind} "${found.name}") is ${what}; reset at position ${found.position + 1} or later`,
    details: {
      executionId: run.id,
      position: found.position,
      kind: found.kind,
      name: found.name,
      state: found.state,
    },
  };
}

async function setAside(
  client: PoolClient,
  run: LockedRun,
  request: ResetRequest & { position: number },
  toVersion: number,
): Promise<ResetRecord> {
  const id = randomUUID();
  const { rows } = await client.query(
    `WITH moved AS (
       DELETE FROM journal_entries WHERE execution_id = $2 AND position >= $4
       RETURNING *
     ), returned AS (
       UPDATE signals SET consumed_position = NULL, consumed_at = NULL
       WHERE execution_id = $2 AND consumed_position >= $4
       RETURNING 1
     ), reset AS (
       INSERT INTO execution_resets (id, execution_id, org_id, position, from_version, to_version, from_status,
                                     actor, reason, idempotency_key, request_hash, set_aside, signals_returned)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11,
               (SELECT count(*) FROM moved), (SELECT count(*) FROM returned))
       RETURNING *
     ), kept AS (
       INSERT INTO journal_set_aside (reset_id, execution_id, position, kind, name, state, result, error, attempts,
                                      turn, seq, cause, started_at, completed_at)
       SELECT $1, execution_id, position, kind, name, state, result, error, attempts, turn, seq, cause,
              started_at, completed_at
       FROM moved
     )
     SELECT * FROM reset`,
    [
      id,
      run.id,
      run.orgId,
      request.position,
      run.workflowVersion,
      toVersion,
      run.status,
      request.actor === null ? null : JSON.stringify(request.actor),
      request.reason,
      request.idempotencyKey,
      request.requestHash,
    ],
  );
  // The kept positions of a failed run had their waits closed when it failed: open again, the new
  // turn waits on them (and re-dispatches what they started) as after a crash.
  await client.query(
    `UPDATE journal_entries SET state = 'pending', completed_at = NULL
     WHERE execution_id = $1 AND position < $2 AND state = 'cancelled'`,
    [run.id, request.position],
  );
  // A new turn number fences out any turn still in flight; `running` (not `waiting`) makes the
  // next turn dispatch its pending children and activities again, and the sweep adds the job back
  // if the wake below is lost.
  await client.query(
    `UPDATE executions
     SET status = 'running', workflow_version = $2, turn = turn + 1, failure = NULL, output = NULL, hold = NULL,
         waiting_for = NULL, wake_at = NULL, completed_at = NULL, recovery_attempts = 0, suspended_since = NULL,
         updated_at = now()
     WHERE id = $1`,
    [run.id, toVersion],
  );
  return toRecord(rows[0]);
}

async function earlierReset(client: PoolClient, executionId: string, idempotencyKey: string) {
  const { rows } = await client.query(
    "SELECT * FROM execution_resets WHERE execution_id = $1 AND idempotency_key = $2",
    [executionId, idempotencyKey],
  );
  return rows[0] ? { requestHash: rows[0].request_hash as string, record: toRecord(rows[0]) } : null;
}

// biome-ignore lint/suspicious/noExplicitAny: a row of execution_resets as pg returns it
function toRecord(r: any): ResetRecord {
  return {
    id: r.id,
    executionId: r.execution_id,
    position: r.position,
    fromVersion: r.from_version,
    toVersion: r.to_version,
    fromStatus: r.from_status,
    at: (r.created_at as Date).toISOString(),
    by: r.actor ?? null,
    reason: r.reason,
    setAside: r.set_aside,
    signalsReturned: r.signals_returned,
  };
}

/** A reset with the positions it set aside, for the run view and the evidence export. */
export interface ResetHistory extends ResetRecord {
  entries: {
    position: number;
    kind: string;
    name: string;
    state: string;
    result: unknown;
    error: unknown;
    completedAt: string | null;
  }[];
}

/** Every reset of an execution of `orgId`, oldest first, each with the positions it set aside. */
export async function readResets(pool: Pool, orgId: string, executionId: string): Promise<ResetHistory[]> {
  const { rows } = await pool.query(
    `SELECT r.*, COALESCE(
       (SELECT jsonb_agg(jsonb_build_object('position', s.position, 'kind', s.kind, 'name', s.name, 'state', s.state,
                                            'result', s.result, 'error', s.error, 'completedAt', s.completed_at)
                         ORDER BY s.position)
        FROM journal_set_aside s WHERE s.reset_id = r.id), '[]'::jsonb) AS entries
     FROM execution_resets r WHERE r.execution_id = $1 AND r.org_id = $2 ORDER BY r.created_at, r.id`,
    [executionId, orgId],
  );
  return rows.map((r) => ({ ...toRecord(r), entries: r.entries }));
}
