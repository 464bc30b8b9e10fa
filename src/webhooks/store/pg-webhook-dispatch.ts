import type { Pool } from "pg";
import { withTransaction } from "../../store/with-transaction.js";
import type { SealedWebhookSecret } from "./pg-webhook-secrets.js";

/** A delivery a dispatcher claimed: everything one attempt needs. */
export interface ClaimedDelivery {
  deliveryId: string;
  /** The receipt written for this attempt. */
  receiptId: string;
  /** This attempt's number, from 1; also the claim token {@link PgWebhookDispatch.finishAttempt} checks. */
  attempt: number;
  eventId: string;
  eventType: string;
  /** The event's JSON body as sent, the same bytes on every attempt. */
  body: string;
  url: string;
  subscriptionId: string;
  /** The subscription's signing secret as stored; the dispatcher opens it to sign. */
  secret: SealedWebhookSecret;
}

/** What an attempt decided for its delivery. */
export type AttemptOutcome = { kind: "delivered" } | { kind: "retry"; delayMs: number } | { kind: "dead" };

export interface FinishedAttempt {
  deliveryId: string;
  receiptId: string;
  attempt: number;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  response: string | null;
  outcome: AttemptOutcome;
}

/**
 * The dispatcher's side of the webhook tables (docs/webhooks.md, "Delivery"). A claim takes due
 * deliveries `FOR UPDATE SKIP LOCKED` (runners never take the same one), counts the attempt,
 * writes its receipt and moves `next_attempt_at` past the attempt's lease, all in one commit: a
 * dispatcher that dies mid-attempt leaves a delivery that comes due again when the lease ends.
 */
export class PgWebhookDispatch {
  constructor(private readonly pool: Pool) {}

  /** Claims up to `limit` due deliveries for `leaseMs`. */
  claimDue(limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<
        Omit<ClaimedDelivery, "receiptId" | "secret"> & { sealed: string; keyId: string | null }
      >(
        `WITH due AS (
           SELECT id FROM webhook_deliveries
            WHERE status = 'pending' AND next_attempt_at <= now()
            ORDER BY next_attempt_at LIMIT $1
            FOR UPDATE SKIP LOCKED
         ), claimed AS (
           UPDATE webhook_deliveries d
              SET attempts = d.attempts + 1, next_attempt_at = now() + $2 * interval '1 millisecond'
             FROM due WHERE d.id = due.id
           RETURNING d.id, d.attempts, d.event_id, d.subscription_id
         )
         SELECT c.id AS "deliveryId", c.attempts AS attempt, e.id AS "eventId", e.type AS "eventType",
                e.payload::text AS body, s.url,
                s.id AS "subscriptionId", s.secret AS sealed, s.secret_key_id AS "keyId"
           FROM claimed c
           JOIN webhook_events e ON e.id = c.event_id
           JOIN webhook_subscriptions s ON s.id = c.subscription_id`,
        [limit, leaseMs],
      );
      if (rows.length === 0) return [];
      const ids = rows.map((r) => r.deliveryId);
      // An earlier attempt whose dispatcher stopped before recording its outcome.
      await client.query(
        `UPDATE webhook_receipts SET error = 'abandoned: the dispatcher stopped before the attempt ended'
          WHERE delivery_id = ANY($1::uuid[]) AND duration_ms IS NULL AND error IS NULL`,
        [ids],
      );
      const receipts = await client.query<{ id: string; delivery_id: string }>(
        `INSERT INTO webhook_receipts (delivery_id, attempt, started_at)
         SELECT d, a, now() FROM unnest($1::uuid[], $2::int[]) AS t(d, a)
         RETURNING id::text, delivery_id`,
        [ids, rows.map((r) => r.attempt)],
      );
      const receiptOf = new Map(receipts.rows.map((r) => [r.delivery_id, r.id]));
      return rows.map(({ sealed, keyId, ...row }) => ({
        ...row,
        secret: { sealed, keyId },
        receiptId: receiptOf.get(row.deliveryId) as string,
      }));
    });
  }

  /**
   * Records how an attempt ended and what follows: its receipt, then the delivery (only while it is
   * still pending at this attempt: a re-claim after an expired lease, a redelivery or a deleted
   * subscription has moved it on), then the event's `dispatch_settled_at` once none of its
   * deliveries is pending. Returns false when the delivery had moved on.
   */
  finishAttempt(finished: FinishedAttempt): Promise<boolean> {
    return withTransaction(this.pool, async (client) => {
      await client.query(
        `UPDATE webhook_receipts SET duration_ms = $3, status_code = $4, error = $5, response = $6
          WHERE id = $1 AND delivery_id = $2`,
        [
          finished.receiptId,
          finished.deliveryId,
          finished.durationMs,
          finished.statusCode,
          finished.error,
          finished.response,
        ],
      );
      const { outcome } = finished;
      const { rows } = await client.query<{ event_id: string }>(
        `UPDATE webhook_deliveries
            SET status = $3::"WebhookDeliveryStatus", last_status_code = $4, last_error = $5,
                next_attempt_at = CASE WHEN $3 = 'pending' THEN now() + $6 * interval '1 millisecond' ELSE next_attempt_at END,
                finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE now() END
          WHERE id = $1 AND attempts = $2 AND status = 'pending'
          RETURNING event_id`,
        [
          finished.deliveryId,
          finished.attempt,
          outcome.kind === "retry" ? "pending" : outcome.kind,
          finished.statusCode,
          finished.error,
          outcome.kind === "retry" ? outcome.delayMs : 0,
        ],
      );
      const eventId = rows[0]?.event_id;
      if (eventId === undefined) return false;
      if (outcome.kind !== "retry") await settleEvents(client, [eventId]);
      return true;
    });
  }
}

/**
 * Sets `dispatch_settled_at` on each event none of whose deliveries is pending, once. Retention
 * counts from this instant (docs/webhooks.md, "Retention").
 */
export async function settleEvents(
  client: { query(sql: string, values: unknown[]): Promise<unknown> },
  eventIds: string[],
): Promise<void> {
  await client.query(
    `UPDATE webhook_events e SET dispatch_settled_at = now()
      WHERE e.id = ANY($1::uuid[]) AND e.dispatch_settled_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'pending')`,
    [eventIds],
  );
}
