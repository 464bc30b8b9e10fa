import type { Pool } from "pg";
import { type PrismaClient, prismaFor } from "./prisma.js";

/** The audited actions (README, "Audit"): closed list, stable strings. */
export const AUDIT_ACTIONS = [
  "approval.vote",
  "execution.signal",
  "execution.cancel",
  /** A suspended or held execution retried now (POST /v1/executions/{id}/resume). */
  "execution.resume",
  /** A run paused (POST /v1/executions/{id}/pause). */
  "execution.pause",
  /** A paused run unpaused (POST /v1/executions/{id}/unpause). */
  "execution.unpause",
  /** A run reset onto the newest version from a journal position (POST /v1/executions/{id}/reset). */
  "execution.reset",
  /** A signed evidence export was issued (GET /v1/executions/{id}/evidence). */
  "execution.evidence",
  "key.issue",
  "key.revoke",
  /** A mutating request under /admin/queues (Bull Board), by a platform key. */
  "queue.change",
  /** A webhook subscription created (POST /v1/webhooks/subscriptions); target: its id, `new` if refused. */
  "webhook.create",
  /** A webhook subscription deleted (DELETE /v1/webhooks/subscriptions/{id}). */
  "webhook.delete",
  /** A test delivery asked for (POST /v1/webhooks/subscriptions/{id}/test). */
  "webhook.test",
  /** A finished delivery sent again (POST /v1/webhooks/deliveries/{id}/redeliver). */
  "webhook.redeliver",
  /** A contract added to the organisation's Ledger Index scope; target: chain, address, kind and start height. */
  "contract.track",
  /** A mint of an asset to holders asked for (POST /v1/assets/{id}/mints); target: `asset:<id>`. */
  "asset.mint",
  /** A runner schedule paused (POST /v1/platform/schedules/{name}/pause); target: its name. */
  "schedule.pause",
  /** A paused runner schedule resumed (POST /v1/platform/schedules/{name}/resume). */
  "schedule.resume",
  /** A tick of a runner schedule asked for now (POST /v1/platform/schedules/{name}/trigger). */
  "schedule.trigger",
  /** A bulk operation created (POST /v1/operations; target: its id) or counted (a dry run; target: `operations`). */
  "operation.create",
  /** A bulk operation's abort asked for (POST /v1/operations/{id}/abort). */
  "operation.abort",
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
  private readonly db: PrismaClient;

  constructor(pool: Pool) {
    this.db = prismaFor(pool);
  }

  async append(event: AuditEventInput): Promise<void> {
    await this.db.auditEvent.create({ data: event });
  }

  /** The organisation's events, newest first, `limit` at most. */
  async list(filter: AuditFilter): Promise<AuditEventRecord[]> {
    const rows = await this.db.auditEvent.findMany({
      where: {
        orgId: filter.orgId,
        ...(filter.action !== undefined ? { action: filter.action } : {}),
        ...(filter.subject !== undefined ? { subject: filter.subject } : {}),
        ...(filter.actorKeyId !== undefined ? { actorKeyId: filter.actorKeyId } : {}),
        ...(filter.target !== undefined ? { target: filter.target } : {}),
        ...(filter.beforeId !== undefined ? { id: { lt: BigInt(filter.beforeId) } } : {}),
      },
      orderBy: { id: "desc" },
      take: filter.limit,
    });
    return rows.map((r) => ({
      id: r.id.toString(),
      at: r.at.toISOString(),
      actorKeyId: r.actorKeyId,
      subject: r.subject,
      orgId: r.orgId,
      role: r.role,
      action: r.action as AuditAction,
      target: r.target,
      requestId: r.requestId,
      outcome: r.outcome,
    }));
  }
}
