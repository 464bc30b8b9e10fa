import type { Pool } from "pg";
import { pgRetentionPolicy, type RetentionPolicy } from "./retention-policy.js";

/**
 * A webhook event past retention (docs/webhooks.md, "Retention"): its `dispatch_settled_at` is set
 * and older than the cutoff `$1` (retention counts from settlement, never from creation; a null
 * marker keeps the event), it is not a test delivery, and none of its deliveries is still pending
 * (a redelivery clears the marker too; this guards the window in between). Events have no
 * provisional state today: they are written in the transaction of the change they report.
 */
const PAST_RETENTION = `
  e.dispatch_settled_at IS NOT NULL AND e.dispatch_settled_at < $1 AND NOT e.test
  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.event_id = e.id AND p.status = 'pending')`;

/**
 * Webhook audit rows: receipts, then deliveries, then the event, in one statement per batch, each
 * counted. Events another transaction holds (a redelivery in progress) are skipped, not waited on.
 */
export function webhookRetentionPolicy(pool: Pool): RetentionPolicy {
  return pgRetentionPolicy(pool, {
    name: "webhook-events",
    async deleteBatch(client, cutoff, limit) {
      const doomed = await client.query<{ id: string }>(
        `SELECT e.id FROM webhook_events e WHERE ${PAST_RETENTION}
          ORDER BY e.dispatch_settled_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [cutoff, limit],
      );
      const ids = doomed.rows.map((r) => r.id);
      if (ids.length === 0)
        return { deleted: { webhook_receipts: 0, webhook_deliveries: 0, webhook_events: 0 }, primary: 0 };
      // Children first: the foreign keys refuse any other order.
      const receipts = await client.query(
        `DELETE FROM webhook_receipts r USING webhook_deliveries d
          WHERE r.delivery_id = d.id AND d.event_id = ANY($1::uuid[])`,
        [ids],
      );
      const deliveries = await client.query(
        "DELETE FROM webhook_deliveries WHERE event_id = ANY($1::uuid[])",
        [ids],
      );
      const events = await client.query("DELETE FROM webhook_events WHERE id = ANY($1::uuid[])", [ids]);
      return {
        deleted: {
          webhook_receipts: receipts.rowCount ?? 0,
          webhook_deliveries: deliveries.rowCount ?? 0,
          webhook_events: events.rowCount ?? 0,
        },
        primary: events.rowCount ?? 0,
      };
    },
    async remaining(db, cutoff) {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_events e WHERE ${PAST_RETENTION}`,
        [cutoff],
      );
      return rows[0]?.n ?? 0;
    },
  });
}
