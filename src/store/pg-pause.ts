import type { Pool } from "pg";
import type { PauseRecord } from "../engine/execution-store.js";
import type { CancelActor } from "./pg-cancellation.js";

/** A pause the API recorded: the key that asked, as it was then (no secret: id, label, subject, role). */
export interface KeyPause extends PauseRecord {
  by: CancelActor | null;
}

/** What a pause request found. */
export type PauseResult =
  | { kind: "not-found" }
  | { kind: "terminal"; status: string }
  /** `pause` is the first request's record: a repeated pause keeps who paused it and why. */
  | { kind: "paused"; workflow: string; status: string; pause: KeyPause; wake: boolean };

/** What an unpause request found. */
export type UnpauseResult =
  | { kind: "not-found" }
  | { kind: "terminal"; status: string }
  | { kind: "not-paused"; status: string }
  | { kind: "unpaused"; workflow: string; status: string; pause: KeyPause; wake: boolean };

/**
 * Pauses an unfinished execution of `orgId` (docs/engine.md, "Pause"): sets `paused`, which its
 * next turn reads and parks on instead of running the body. A repeated request keeps the first
 * record. The caller wakes it when `wake` says so, so a parked or suspended run shows its pause now.
 */
export async function requestPause(
  pool: Pool,
  orgId: string,
  executionId: string,
  pause: KeyPause,
): Promise<PauseResult> {
  const { rows } = await pool.query<{ workflow: string; status: string; paused: KeyPause; wake: boolean }>(
    `UPDATE executions SET paused = COALESCE(paused, $3::jsonb), updated_at = now()
     WHERE id = $1 AND org_id = $2 AND status NOT IN ('completed', 'failed')
     -- One the keyed gate has not admitted yet (docs/keyed.md) is not woken: a wake would run it
     -- ahead of its key. The gate admits it later and its first turn finds the pause.
     RETURNING workflow, status, paused, NOT (turn = 0 AND key IS NOT NULL) AS wake`,
    [executionId, orgId, JSON.stringify(pause)],
  );
  const row = rows[0];
  if (row)
    return { kind: "paused", workflow: row.workflow, status: row.status, pause: row.paused, wake: row.wake };
  const status = await statusOf(pool, orgId, executionId);
  return status === undefined ? { kind: "not-found" } : { kind: "terminal", status };
}

/**
 * Clears the pause of an execution of `orgId`; the caller wakes it so its next turn replays the
 * journal and goes on (the timers that fell due meanwhile fire then, the signals kept are consumed).
 */
export async function requestUnpause(pool: Pool, orgId: string, executionId: string): Promise<UnpauseResult> {
  const { rows } = await pool.query<{ workflow: string; status: string; paused: KeyPause; wake: boolean }>(
    `UPDATE executions x SET paused = NULL, updated_at = now()
     FROM (SELECT id, paused FROM executions WHERE id = $1 AND org_id = $2 FOR UPDATE) before
     WHERE x.id = before.id AND before.paused IS NOT NULL AND x.status NOT IN ('completed', 'failed')
     RETURNING x.workflow, x.status, before.paused, NOT (x.turn = 0 AND x.key IS NOT NULL) AS wake`,
    [executionId, orgId],
  );
  const row = rows[0];
  if (row)
    return {
      kind: "unpaused",
      workflow: row.workflow,
      status: row.status,
      pause: row.paused,
      wake: row.wake,
    };
  const status = await statusOf(pool, orgId, executionId);
  if (status === undefined) return { kind: "not-found" };
  if (status === "completed" || status === "failed") return { kind: "terminal", status };
  return { kind: "not-paused", status };
}

async function statusOf(pool: Pool, orgId: string, executionId: string): Promise<string | undefined> {
  const { rows } = await pool.query<{ status: string }>(
    "SELECT status FROM executions WHERE id = $1 AND org_id = $2",
    [executionId, orgId],
  );
  return rows[0]?.status;
}
