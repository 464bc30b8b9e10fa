import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/observability/logger.js";
import { isInternalAddress } from "../../src/webhooks/address-policy.js";
import { PgWebhookDispatch } from "../../src/webhooks/store/pg-webhook-dispatch.js";
import { PgWebhooks } from "../../src/webhooks/store/pg-webhooks.js";
import { startWebhookDispatcher, type WebhookDispatcher } from "../../src/webhooks/webhook-dispatcher.js";
import { sendWebhook } from "../../src/webhooks/webhook-sender.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import {
  insertExecution,
  setExecution,
  subscribeReceiver,
  TEST_KEYRING,
  TEST_WEBHOOK_SETTINGS,
  until,
} from "./support.js";

/**
 * Delivery against a real HTTP receiver that fails, hangs and sees duplicates: the outbox trigger
 * writes events only for subscribed changes, every attempt is signed and recorded, failures are
 * retried and then dead-lettered, and the event settles when its deliveries are final.
 */
let db: TestDatabase;
let receiver: WebhookReceiver;
let dispatcher: WebhookDispatcher;
let webhooks: PgWebhooks;
let subscriptionId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  receiver = await startWebhookReceiver();
  webhooks = new PgWebhooks(db.pool);
  const subscription = await subscribeReceiver(db.pool, receiver, [
    "execution.completed",
    "execution.failed",
    "execution.milestone",
  ]);
  subscriptionId = subscription.id;
  dispatcher = startWebhookDispatcher({
    store: new PgWebhookDispatch(db.pool),
    settings: TEST_WEBHOOK_SETTINGS,
    keyring: TEST_KEYRING,
    logger: createLogger({ level: "error" }),
  });
});

afterAll(async () => {
  await dispatcher?.stop();
  await receiver?.close();
  await db?.drop();
});

const deliveriesOf = async (executionId: string) =>
  (
    await db.pool.query<{ id: string; status: string; attempts: number; settled: boolean; type: string }>(
      `SELECT d.id, d.status::text, d.attempts, e.dispatch_settled_at IS NOT NULL AS settled, e.type
         FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
        WHERE e.execution_id = $1 ORDER BY e.created_at`,
      [executionId],
    )
  ).rows;

describe("webhook delivery", () => {
  it("writes events only for subscribed organisations and types, and delivers each one signed", async () => {
    const mine = await insertExecution(db.pool, "org-a");
    const theirs = await insertExecution(db.pool, "org-b");
    await setExecution(db.pool, mine, { progress: { milestone: 1, stage: "accepted" } });
    await setExecution(db.pool, mine, { progress: { milestone: 1, stage: "still accepted" } });
    await setExecution(db.pool, mine, { status: "waiting" }); // not subscribed
    await setExecution(db.pool, mine, { status: "completed" });
    await setExecution(db.pool, theirs, { status: "completed" }); // org-b has no subscription
    await until("both deliveries delivered", async () => {
      const rows = await deliveriesOf(mine);
      return rows.length === 2 && rows.every((r) => r.status === "delivered" && r.settled);
    });
    expect((await deliveriesOf(mine)).map((r) => r.type)).toEqual([
      "execution.milestone",
      "execution.completed",
    ]);
    expect(await deliveriesOf(theirs)).toEqual([]);
    const got = receiver.received.filter(
      (r) => (r.body.data as { executionId: string }).executionId === mine,
    );
    expect(got.map((r) => r.eventType).sort()).toEqual(["execution.completed", "execution.milestone"]);
    for (const r of got) {
      expect(r.signatureValid).toBe(true);
      expect(r.body.id).toBe(r.eventId);
      expect(r.body.type).toBe(r.eventType);
    }
    const milestone = got.find((r) => r.eventType === "execution.milestone");
    expect((milestone?.body.data as { progress?: unknown } | undefined)?.progress).toEqual({
      milestone: 1,
      stage: "accepted",
    });
  });

  it("retries a 500 and a hung receiver with backoff, recording every attempt, then delivers", async () => {
    const id = await insertExecution(db.pool, "org-a");
    let seen = 0;
    receiver.answer = ({ executionId }) => {
      if (executionId !== id) return { status: 200 };
      seen++;
      return seen === 1 ? { status: 500 } : seen === 2 ? "hang" : { status: 204 };
    };
    await setExecution(db.pool, id, {
      status: "failed",
      failure: { code: "BOOM", message: "it broke", retryable: false },
    });
    const [event] = (
      await db.pool.query<{ id: string }>("SELECT id FROM webhook_events WHERE execution_id = $1", [id])
    ).rows;
    await until("delivered after retries", async () => (await deliveriesOf(id))[0]?.status === "delivered");
    const [delivery] = await deliveriesOf(id);
    const detail = await webhooks.getDelivery("org-a", delivery?.id as string);
    expect(detail?.attempts).toBe(3);
    expect(detail?.receipts.map((r) => [r.attempt, r.statusCode, r.error])).toEqual([
      [1, 500, "status 500"],
      [2, null, "timeout"],
      [3, 204, null],
    ]);
    expect(detail?.receipts.every((r) => r.durationMs !== null)).toBe(true);
    const body = receiver.received.find((r) => r.eventId === event?.id)?.body as {
      data: Record<string, unknown>;
    };
    expect(body.data.failure).toEqual({ code: "BOOM", message: "it broke", retryable: false });
    receiver.answer = () => ({ status: 200 });
  });

  it("dead-letters after maxAttempts; a redelivery sends the same event id and the receiver dedupes", async () => {
    const id = await insertExecution(db.pool, "org-a");
    receiver.answer = ({ executionId }) => (executionId === id ? { status: 503 } : { status: 200 });
    await setExecution(db.pool, id, { status: "completed" });
    const deadEvent = (
      await db.pool.query<{ id: string }>("SELECT id FROM webhook_events WHERE execution_id = $1", [id])
    ).rows[0]?.id as string;
    await until("dead-lettered", async () => (await deliveriesOf(id))[0]?.status === "dead");
    const [dead] = await deliveriesOf(id);
    expect(dead).toMatchObject({ attempts: TEST_WEBHOOK_SETTINGS.maxAttempts, settled: true });
    const letters = await webhooks.listDeliveries({ orgId: "org-a", status: "dead", limit: 10 });
    expect(letters.map((l) => l.id)).toEqual([dead?.id]);
    expect(letters[0]?.lastStatusCode).toBe(503);
    expect(await webhooks.listDeliveries({ orgId: "org-b", status: "dead", limit: 10 })).toEqual([]);

    receiver.answer = () => ({ status: 200 });
    expect(await webhooks.redeliver("org-b", dead?.id as string)).toBe("not-found");
    expect(await webhooks.redeliver("org-a", dead?.id as string)).toBe("redelivered");
    await until("redelivered", async () => (await deliveriesOf(id))[0]?.status === "delivered");
    expect((await deliveriesOf(id))[0]?.settled).toBe(true);
    // The receiver lost its record: the delivered event is sent again; it answers 2xx twice and dedupes.
    expect(await webhooks.redeliver("org-a", dead?.id as string)).toBe("redelivered");
    await until(
      "sent twice",
      async () =>
        receiver.received.filter(
          (r) =>
            r.eventId === deadEvent &&
            r.answered !== "hang" &&
            (r.answered as { status: number }).status === 200,
        ).length === 2,
    );
    const accepted = receiver.received.filter(
      (r) => r.eventId === deadEvent && !(r.answered === "hang") && r.answered.status === 200,
    );
    expect(accepted.map((r) => r.duplicate)).toEqual([false, true]);
    expect([...receiver.accepted()].filter((e) => e === deadEvent)).toHaveLength(1);
  });

  it("cancels pending deliveries of a deleted subscription and settles their events", async () => {
    const id = await insertExecution(db.pool, "org-a");
    receiver.answer = () => "hang";
    await setExecution(db.pool, id, { status: "completed" });
    await until("first attempt in flight", async () => (await deliveriesOf(id))[0]?.attempts === 1);
    expect(await webhooks.deleteSubscription("org-b", subscriptionId)).toBe(false);
    expect(await webhooks.deleteSubscription("org-a", subscriptionId)).toBe(true);
    expect(await deliveriesOf(id)).toMatchObject([{ status: "cancelled", settled: true }]);
    // The attempt in flight ends (timeout) and finds the delivery moved on: it stays cancelled.
    await until("attempt recorded", async () => {
      const detail = await webhooks.getDelivery("org-a", (await deliveriesOf(id))[0]?.id as string);
      return detail?.receipts[0]?.error === "timeout";
    });
    expect((await deliveriesOf(id))[0]?.status).toBe("cancelled");
    receiver.answer = () => ({ status: 200 });
  });

  it("refuses at connect time a name that resolves to an internal address", async () => {
    // This machine's own name resolves to a loopback or private address, yet is not a literal.
    const name = hostname();
    expect(isInternalAddress((await lookup(name)).address)).toBe(true);
    const url = new URL(receiver.url);
    const result = await sendWebhook({
      url: `http://${name}:${url.port}/hooks`,
      body: "{}",
      headers: {},
      timeoutMs: 2_000,
      allowPrivateAddresses: false,
    });
    expect(result.statusCode).toBeNull();
    expect(result.error).toMatch(/address refused: .* resolves to internal/);
  });
});
