import type { Pool } from "pg";
import type { SignalSender } from "../engine/execution-client.js";
import { iso } from "./pg-execution-reads.js";
import { type ResetHistory, readResets } from "./pg-reset.js";

/** A signal as stored, for the evidence export. */
export interface SignalRecord {
  name: string;
  payload: unknown;
  idempotencyKey: string | null;
  /** The key that delivered it, as it was then; null for an approval's decision or when not recorded. */
  sentBy: SignalSender | null;
  consumedPosition: number | null;
  consumedAt: string | null;
  createdAt: string;
}

/** An audit row about one execution (its signals, votes, cancels, resumes, exports). */
export interface ExecutionAuditRecord {
  at: string;
  action: string;
  subject: string;
  role: string;
  actorKeyId: string | null;
  target: string;
  outcome: string;
}

/**
 * The facts of one execution that the evidence export adds to its journal and votes: its input
 * and initiator, the signals delivered to it and the audit rows naming it. Every query is scoped
 * to the organisation; null when the organisation has no such execution.
 */
export async function loadEvidenceExtras(
  pool: Pool,
  orgId: string,
  executionId: string,
): Promise<{
  input: unknown;
  createdBy: string | null;
  signals: SignalRecord[];
  audit: ExecutionAuditRecord[];
  /** Its resets, each with the journal positions it set aside (docs/engine.md, "Reset"). */
  resets: ResetHistory[];
} | null> {
  const execution = await pool.query<{ input: unknown; created_by: string | null }>(
    "SELECT input, created_by FROM executions WHERE id = $1 AND org_id = $2",
    [executionId, orgId],
  );
  const row = execution.rows[0];
  if (!row) return null;
  const signals = await pool.query(
    `SELECT name, payload, idempotency_key, sent_by, consumed_position, consumed_at, created_at
     FROM signals WHERE execution_id = $1 ORDER BY id`,
    [executionId],
  );
  const audit = await readExecutionAudit(pool, orgId, executionId);
  const resets = await readResets(pool, orgId, executionId);
  return {
    input: row.input,
    createdBy: row.created_by,
    signals: signals.rows.map((s) => ({
      name: s.name,
      payload: s.payload,
      idempotencyKey: s.idempotency_key,
      sentBy: s.sent_by ?? null,
      consumedPosition: s.consumed_position,
      consumedAt: iso(s.consumed_at),
      createdAt: iso(s.created_at) as string,
    })),
    audit,
    resets,
  };
}

/**
 * The audit entries of one execution, oldest first. Audit targets are the execution id, or the id
 * followed by "/<what>" (a signal, an approval).
 */
export async function readExecutionAudit(
  pool: Pool,
  orgId: string,
  executionId: string,
): Promise<ExecutionAuditRecord[]> {
  const { rows } = await pool.query(
    `SELECT at, action, subject, role, actor_key_id, target, outcome FROM audit_events
     WHERE org_id = $1 AND (target = $2 OR starts_with(target, $2 || '/')) ORDER BY id`,
    [orgId, executionId],
  );
  return rows.map((a) => ({
    at: iso(a.at) as string,
    action: a.action,
    subject: a.subject,
    role: a.role,
    actorKeyId: a.actor_key_id,
    target: a.target,
    outcome: a.outcome,
  }));
}

/** The evidence export's reads over one pool (the api's). */
export class PgEvidence {
  constructor(private readonly pool: Pool) {}

  /** See {@link loadEvidenceExtras}. */
  extras(orgId: string, executionId: string) {
    return loadEvidenceExtras(this.pool, orgId, executionId);
  }
}
