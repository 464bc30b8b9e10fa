import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/observability/logger.js";
import { runRetentionPass } from "../../src/retention/retention-pass.js";
import { webhookRetentionPolicy } from "../../src/store/retention/webhook-retention.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

/**
 * Webhook audit retention over real rows: it counts from `dispatch_settled_at`, deletes receipts,
 * then deliveries, then the event, and keeps an unsettled event, one with a pending delivery, a
 * test delivery and one settled inside the window, whatever their age.
 */
let db: TestDatabase;
const DAY = 86_400_000;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function event(
  name: string,
  options: { createdDaysAgo: number; settledDaysAgo: number | null; test?: boolean; pending?: boolean },
): Promise<string> {
  const { rows } = await db.pool.query<{ id: string }>(
    `INSERT INTO webhook_events (id, org_id, type, payload, test, created_at, dispatch_settled_at)
     VALUES (gen_random_uuid(), 'org-a', 'execution.completed', jsonb_build_object('name', $1::text), $2,
             now() - $3 * interval '1 day', now() - $4 * interval '1 day') RETURNING id`,
    [name, options.test ?? false, options.createdDaysAgo, options.settledDaysAgo],
  );
  const id = rows[0]?.id as string;
  const delivery = await db.pool.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (id, event_id, subscription_id, org_id, status, attempts)
     VALUES (gen_random_uuid(), $1, (SELECT id FROM webhook_subscriptions LIMIT 1), 'org-a', $2::"WebhookDeliveryStatus", 2)
     RETURNING id`,
    [id, options.pending ? "pending" : "delivered"],
  );
  await db.pool.query(
    `INSERT INTO webhook_receipts (delivery_id, attempt, started_at, duration_ms, status_code)
     VALUES ($1, 1, now(), 5, 500), ($1, 2, now(), 5, 200)`,
    [delivery.rows[0]?.id],
  );
  return id;
}

describe("webhook retention", () => {
  it("deletes receipts, deliveries, then settled events past the window, and keeps the rest", async () => {
    await db.pool.query(
      "INSERT INTO webhook_subscriptions (id, org_id, url, events, secret) VALUES (gen_random_uuid(), 'org-a', 'https://x', '{execution.completed}', 's')",
    );
    const old1 = await event("settled long ago", { createdDaysAgo: 60, settledDaysAgo: 40 });
    const old2 = await event("settled long ago too", { createdDaysAgo: 50, settledDaysAgo: 35 });
    const kept = [
      await event("created long ago, settled recently", { createdDaysAgo: 90, settledDaysAgo: 1 }),
      await event("never settled", { createdDaysAgo: 90, settledDaysAgo: null }),
      await event("test delivery", { createdDaysAgo: 90, settledDaysAgo: 80, test: true }),
      // A redelivery between its settlement and the pass: the marker is still set, a delivery pending.
      await event("pending again", { createdDaysAgo: 90, settledDaysAgo: 80, pending: true }),
    ];
    const policy = webhookRetentionPolicy(db.pool);
    const cutoff = new Date(Date.now() - 30 * DAY);
    expect(await policy.remaining(cutoff)).toBe(2);

    const report = await runRetentionPass({
      policies: [policy],
      cutoff,
      batchSize: 1, // two batches of one: bounded, and the loop continues while batches are full
      logger: createLogger({ level: "error" }),
    });
    expect(report.policies[0]).toMatchObject({
      policy: "webhook-events",
      deleted: { webhook_receipts: 4, webhook_deliveries: 2, webhook_events: 2 },
      remaining: 0,
      failures: 0,
    });
    expect(report.policies[0]?.batches).toBeGreaterThanOrEqual(2);
    const { rows } = await db.pool.query<{ id: string }>("SELECT id FROM webhook_events ORDER BY created_at");
    expect(rows.map((r) => r.id).sort()).toEqual([...kept].sort());
    expect(rows.map((r) => r.id)).not.toContain(old1);
    expect(rows.map((r) => r.id)).not.toContain(old2);
    const children = await db.pool.query<{ d: number; r: number }>(
      "SELECT (SELECT count(*) FROM webhook_deliveries)::int AS d, (SELECT count(*) FROM webhook_receipts)::int AS r",
    );
    expect(children.rows[0]).toEqual({ d: 4, r: 8 });
  });
});
