import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/observability/logger.js";
import { createMetrics, type TenorMetrics } from "../../src/observability/metrics.js";
import { PgWebhookDispatch } from "../../src/webhooks/store/pg-webhook-dispatch.js";
import { startWebhookDispatcher, type WebhookDispatcher } from "../../src/webhooks/webhook-dispatcher.js";
import { registerWebhookBacklogGauge } from "../../src/webhooks/webhook-metrics.js";
import { labelViolations, sampleValue } from "../observability/metric-labels.js";
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
 * The dispatcher's metrics as a runner exports them, read from the registry's exposition: attempts
 * by outcome (delivered, retry, dead), their duration, and the outbox backlog read at scrape time.
 */
let db: TestDatabase;
let receiver: WebhookReceiver;
let metrics: TenorMetrics;
let dispatcher: WebhookDispatcher | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  receiver = await startWebhookReceiver();
  await subscribeReceiver(db.pool, receiver);
  metrics = createMetrics("runner");
  registerWebhookBacklogGauge(metrics, db.pool);
});

afterAll(async () => {
  await dispatcher?.stop();
  await receiver?.close();
  await db?.drop();
});

const scrape = () => metrics.registry.metrics();
const attempts = async (outcome: string) =>
  sampleValue(await scrape(), "tenor_webhook_attempts_total", { outcome }) ?? 0;
const durations = async (outcome: string) =>
  sampleValue(await scrape(), "tenor_webhook_attempt_duration_seconds_count", { outcome }) ?? 0;

describe("webhook metrics", () => {
  it("counts a delivered and a dead-lettered delivery by outcome, times each attempt and reports the backlog", async () => {
    expect(sampleValue(await scrape(), "tenor_webhook_deliveries_pending")).toBe(0);
    const delivered = await insertExecution(db.pool, "org-a");
    const failing = await insertExecution(db.pool, "org-a");
    receiver.answer = ({ executionId }) => (executionId === failing ? { status: 500 } : { status: 204 });
    // Written before any dispatcher runs: both wait in the outbox.
    await setExecution(db.pool, delivered, { status: "completed" });
    await setExecution(db.pool, failing, { status: "completed" });
    expect(sampleValue(await scrape(), "tenor_webhook_deliveries_pending")).toBe(2);

    dispatcher = startWebhookDispatcher({
      store: new PgWebhookDispatch(db.pool),
      settings: TEST_WEBHOOK_SETTINGS,
      keyring: TEST_KEYRING,
      logger: createLogger({ level: "error" }),
      metrics,
    });
    await until("both deliveries final", async () => {
      const { rows } = await db.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM webhook_deliveries WHERE status IN ('delivered', 'dead')",
      );
      return rows[0]?.n === 2;
    });
    // The last outcome is counted just after its commit: wait for it rather than race it.
    await until("the dead attempt counted", async () => (await attempts("dead")) === 1);

    const retries = TEST_WEBHOOK_SETTINGS.maxAttempts - 1;
    expect(await attempts("delivered")).toBe(1);
    expect(await attempts("retry")).toBe(retries);
    expect(await durations("delivered")).toBe(1);
    expect(await durations("retry")).toBe(retries);
    expect(await durations("dead")).toBe(1);
    const text = await scrape();
    // In seconds: the delivered attempt's receipt says how long it took, in ms.
    const { rows } = await db.pool.query<{ ms: number }>(
      "SELECT duration_ms AS ms FROM webhook_receipts WHERE status_code = 204",
    );
    expect(rows).toHaveLength(1);
    expect(sampleValue(text, "tenor_webhook_attempt_duration_seconds_sum", { outcome: "delivered" })).toBe(
      (rows[0]?.ms ?? Number.NaN) / 1_000,
    );
    expect(sampleValue(text, "tenor_webhook_deliveries_pending")).toBe(0);
    // Bounded labels only: no delivery, event or subscription id, no URL.
    expect(labelViolations(text)).toEqual([]);
    expect(text).not.toContain(receiver.url);
  });
});
