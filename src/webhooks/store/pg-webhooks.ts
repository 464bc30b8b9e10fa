import { randomUUID } from "node:crypto";
import type { Pool } from "pg";
import { withTransaction } from "../../store/with-transaction.js";
import { settleEvents } from "./pg-webhook-dispatch.js";
import type { SealedWebhookSecret } from "./pg-webhook-secrets.js";

/** A subscription as the API shows it: never its secret (docs/webhooks.md, "Secrets"). */
export interface WebhookSubscriptionRecord {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  createdAt: string;
}

export type WebhookDeliveryStatus = "pending" | "delivered" | "dead" | "cancelled";

export interface WebhookDeliveryRecord {
  id: string;
  eventId: string;
  eventType: string;
  executionId: string | null;
  subscriptionId: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  test: boolean;
  createdAt: string;
  finishedAt: string | null;
  /** When every delivery of the event reached a final state (`dispatch_settled_at`); null until then. */
  eventSettledAt: string | null;
}

/**
 * Where an attempt stands: `completed` once its outcome is recorded; `in_flight` while it is the
 * delivery's latest attempt, the delivery is pending and its lease has not ended; `abandoned` when
 * its dispatcher stopped first (a later attempt started, its lease ended, or the delivery moved on).
 */
export type WebhookReceiptState = "in_flight" | "completed" | "abandoned";

export interface WebhookReceiptRecord {
  attempt: number;
  state: WebhookReceiptState;
  startedAt: string;
  durationMs: number | null;
  statusCode: number | null;
  error: string | null;
  response: string | null;
}

export interface DeliveryFilter {
  orgId: string;
  subscriptionId?: string;
  status?: WebhookDeliveryStatus;
  executionId?: string;
  eventId?: string;
  /** Newest first; only deliveries after this one in that order (the cursor of the previous page). */
  after?: { createdAt: string; id: string };
  limit: number;
}

const SUBSCRIPTION_COLUMNS = `id, url, events, description, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt"`;
const ISO = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const DELIVERY_COLUMNS = `d.id, d.event_id AS "eventId", e.type AS "eventType", e.execution_id AS "executionId",
  d.subscription_id AS "subscriptionId", d.status::text AS status, d.attempts,
  CASE WHEN d.status = 'pending' THEN ${ISO("d.next_attempt_at")} END AS "nextAttemptAt",
  d.last_status_code AS "lastStatusCode", d.last_error AS "lastError", e.test,
  ${ISO("d.created_at")} AS "createdAt", ${ISO("d.finished_at")} AS "finishedAt",
  ${ISO("e.dispatch_settled_at")} AS "eventSettledAt"`;

/**
 * The webhook tables as the Platform API uses them (docs/webhooks.md). Every method takes the
 * caller's organisation and matches on it: another organisation's rows are invisible, never an error
 * of a different kind.
 */
export class PgWebhooks {
  constructor(private readonly pool: Pool) {}

  /**
   * Creates a subscription under `id` (the caller's, since a sealed secret is bound to it), with
   * its secret already sealed. The only call that ever returns the secret is the route around it.
   */
  async createSubscription(input: {
    id: string;
    orgId: string;
    url: string;
    events: readonly string[];
    description: string | null;
    secret: SealedWebhookSecret;
    createdBy: string | null;
  }): Promise<WebhookSubscriptionRecord> {
    const { rows } = await this.pool.query<WebhookSubscriptionRecord>(
      `INSERT INTO webhook_subscriptions (id, org_id, url, events, secret, secret_key_id, description, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${SUBSCRIPTION_COLUMNS}`,
      [
        input.id,
        input.orgId,
        input.url,
        input.events,
        input.secret.sealed,
        input.secret.keyId,
        input.description,
        input.createdBy,
      ],
    );
    return rows[0] as WebhookSubscriptionRecord;
  }

  async listSubscriptions(orgId: string): Promise<WebhookSubscriptionRecord[]> {
    const { rows } = await this.pool.query<WebhookSubscriptionRecord>(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions
        WHERE org_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`,
      [orgId],
    );
    return rows;
  }

  async getSubscription(orgId: string, id: string): Promise<WebhookSubscriptionRecord | null> {
    const { rows } = await this.pool.query<WebhookSubscriptionRecord>(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions
        WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`,
      [orgId, id],
    );
    return rows[0] ?? null;
  }

  /**
   * Marks the subscription deleted and cancels its pending deliveries in one transaction (their
   * events settle if nothing else is pending). Its delivered and dead deliveries stay for the audit
   * trail until retention. False when there was no such live subscription.
   */
  deleteSubscription(orgId: string, id: string): Promise<boolean> {
    return withTransaction(this.pool, async (client) => {
      const deleted = await client.query(
        `UPDATE webhook_subscriptions SET deleted_at = now()
          WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`,
        [orgId, id],
      );
      if (deleted.rowCount === 0) return false;
      const { rows } = await client.query<{ event_id: string }>(
        `UPDATE webhook_deliveries SET status = 'cancelled', finished_at = now(), last_error = 'subscription deleted'
          WHERE subscription_id = $1 AND status = 'pending' RETURNING event_id`,
        [id],
      );
      if (rows.length > 0) await settleEvents(client, [...new Set(rows.map((r) => r.event_id))]);
      return true;
    });
  }

  /**
   * A test event (`webhook.test`, marked `test`) with one delivery to the subscription; null when
   * there is no such live subscription. Retention never deletes it.
   */
  createTestDelivery(
    orgId: string,
    subscriptionId: string,
    payload: (eventId: string) => Record<string, unknown>,
  ): Promise<{ eventId: string; deliveryId: string } | null> {
    return withTransaction(this.pool, async (client) => {
      const live = await client.query(
        "SELECT 1 FROM webhook_subscriptions WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL FOR SHARE",
        [orgId, subscriptionId],
      );
      if (live.rowCount === 0) return null;
      const eventId = randomUUID();
      const deliveryId = randomUUID();
      const body = payload(eventId);
      await client.query(
        `INSERT INTO webhook_events (id, org_id, type, payload, test) VALUES ($1, $2, $3, $4::jsonb, true)`,
        [eventId, orgId, body.type, JSON.stringify(body)],
      );
      await client.query(
        "INSERT INTO webhook_deliveries (id, event_id, subscription_id, org_id) VALUES ($1, $2, $3, $4)",
        [deliveryId, eventId, subscriptionId, orgId],
      );
      return { eventId, deliveryId };
    });
  }

  /** Deliveries newest first, filtered by subscription and status (`dead` is the dead-letter view). */
  async listDeliveries(filter: DeliveryFilter): Promise<WebhookDeliveryRecord[]> {
    const values: unknown[] = [filter.orgId, filter.limit];
    const where = ["d.org_id = $1"];
    if (filter.subscriptionId !== undefined) {
      values.push(filter.subscriptionId);
      where.push(`d.subscription_id = $${values.length}`);
    }
    if (filter.status !== undefined) {
      values.push(filter.status);
      where.push(`d.status = $${values.length}::"WebhookDeliveryStatus"`);
    }
    if (filter.executionId !== undefined) {
      values.push(filter.executionId);
      where.push(`e.execution_id = $${values.length}::uuid`);
    }
    if (filter.eventId !== undefined) {
      values.push(filter.eventId);
      where.push(`d.event_id = $${values.length}::uuid`);
    }
    if (filter.after !== undefined) {
      values.push(filter.after.createdAt, filter.after.id);
      where.push(`(d.created_at, d.id) < ($${values.length - 1}::timestamptz, $${values.length}::uuid)`);
    }
    const { rows } = await this.pool.query<WebhookDeliveryRecord>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
        WHERE ${where.join(" AND ")} ORDER BY d.created_at DESC, d.id DESC LIMIT $2`,
      values,
    );
    return rows;
  }

  /** One delivery with its receipts (oldest first) and the body it sends; null if not the org's. */
  async getDelivery(
    orgId: string,
    id: string,
  ): Promise<(WebhookDeliveryRecord & { receipts: WebhookReceiptRecord[]; payload: unknown }) | null> {
    const { rows } = await this.pool.query<WebhookDeliveryRecord & { payload: unknown }>(
      `SELECT ${DELIVERY_COLUMNS}, e.payload FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
        WHERE d.org_id = $1 AND d.id = $2`,
      [orgId, id],
    );
    const delivery = rows[0];
    if (!delivery) return null;
    // A redelivery restarts attempts at 1, so "later" is by receipt id, not by attempt number.
    const receipts = await this.pool.query<WebhookReceiptRecord>(
      `SELECT r.attempt,
              CASE WHEN r.duration_ms IS NOT NULL THEN 'completed'
                   WHEN d.status = 'pending' AND d.next_attempt_at > now()
                        AND r.id = max(r.id) OVER () THEN 'in_flight'
                   ELSE 'abandoned' END AS state,
              ${ISO("r.started_at")} AS "startedAt", r.duration_ms AS "durationMs",
              r.status_code AS "statusCode", r.error, r.response
         FROM webhook_receipts r JOIN webhook_deliveries d ON d.id = r.delivery_id
        WHERE r.delivery_id = $1 ORDER BY r.id`,
      [id],
    );
    return { ...delivery, receipts: receipts.rows };
  }

  /**
   * Sends a finished delivery again (a dead letter, or a delivered one the receiver lost): it is
   * pending with a fresh attempt budget, and its event unsettled until it ends again. The event id
   * is unchanged, so a receiver that already has it dedupes. `pending` when it had not finished.
   */
  redeliver(orgId: string, id: string): Promise<"redelivered" | "pending" | "not-found"> {
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ status: string; event_id: string }>(
        // A delivery of a deleted subscription has nowhere to go: it is not found for redelivery.
        `SELECT d.status::text, d.event_id FROM webhook_deliveries d
           JOIN webhook_subscriptions s ON s.id = d.subscription_id AND s.deleted_at IS NULL
          WHERE d.org_id = $1 AND d.id = $2 FOR UPDATE OF d`,
        [orgId, id],
      );
      const row = rows[0];
      if (!row) return "not-found";
      if (row.status === "pending") return "pending";
      await client.query(
        `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = now(), finished_at = NULL
          WHERE id = $1`,
        [id],
      );
      await client.query("UPDATE webhook_events SET dispatch_settled_at = NULL WHERE id = $1", [
        row.event_id,
      ]);
      return "redelivered";
    });
  }
}
