import type { Pool } from "pg";

/** The audited actions (README, "Audit"): closed list, stable strings. */
export const AUDIT_ACTIONS = [
  "approval.vote",
  "execution.signal",
  "execution.cancel",
  /** A suspended or held execution retried now (POST /v1/executions/{id}/resume). */
  "execution.resume",
  /** A signed evidence export was issued (GET /v1/executions/{id}/evidence). */
  "execution.evidence",
  "key.issue",
  "key.revoke",
  /** A mutating request under /admin/queues (Bull Board), by a platform key. */
  "queue.change",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** One audit row as written: who (key, subject, role, organisation) did what to which target, and how it ended. */
export interface AuditEventInput {
  actorKeyId: string | null;
  subject: string;
  orgId: string | null;
  role: string;
  action: AuditAction;
  target: string;
  requestId: string | null;
  /** `accepted`, or the stable error code of the refusal. */
  outcome: string;
}

export interface AuditEventRecord extends AuditEventInput {
  id: string;
  at: string;
}

export interface AuditFilter {
  orgId: string;
  action?: AuditAction;
  subject?: string;
  actorKeyId?: string;
  target?: string;
  /** Only events with an id below this (the cursor of the previous page): newest first. */
  beforeId?: string;
  limit: number;
}

/**
 * The append-only audit trail on PostgreSQL (`audit_events`; the table's rules make UPDATE and
 * DELETE change nothing). Written outside the action's transaction so that refusals are recorded too.
 */
export class PgAudit {
  constructor(private readonly pool: Pool) {}

  async append(event: AuditEventInput): Promise<void> {
    await this.pool.query(
      `INSERT INTO audit_events (actor_key_id, subject, org_id, role, action, target, request_id, outcome)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        event.actorKeyId,
        event.subject,
        event.orgId,
        event.role,
        event.action,
        event.target,
        event.requestId,
        event.outcome,
      ],
    );
  }

  /** The organisation's events, newest first, `limit` at most. */
  async list(filter: AuditFilter): Promise<AuditEventRecord[]> {
    const where = ["org_id = $1"];
    const values: unknown[] = [filter.orgId];
    const add = (column: string, value: unknown, cast = "") => {
      values.push(value);
      where.push(`${column} = $${values.length}${cast}`);
    };
    if (filter.action !== undefined) add("action", filter.action);
    if (filter.subject !== undefined) add("subject", filter.subject);
    if (filter.actorKeyId !== undefined) add("actor_key_id", filter.actorKeyId, "::uuid");
    if (filter.target !== undefined) add("target", filter.target);
    if (filter.beforeId !== undefined) {
      values.push(filter.beforeId);
      where.push(`id < $${values.length}::bigint`);
    }
    values.push(filter.limit);
    const { rows } = await this.pool.query(
      `SELECT id::text AS id, at, actor_key_id, subject, org_id, role, action, target, request_id, outcome
       FROM audit_events WHERE ${where.join(" AND ")} ORDER BY audit_events.id DESC LIMIT $${values.length}`,
      values,
    );
    return rows.map((r) => ({
      id: r.id,
      at: r.at.toISOString(),
      actorKeyId: r.actor_key_id,
      subject: r.subject,
      orgId: r.org_id,
      role: r.role,
      action: r.action,
      target: r.target,
      requestId: r.request_id,
      outcome: r.outcome,
    }));
  }
}
