import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newWebhookSecret } from "../../src/webhooks/signature.js";
import { PgWebhooks } from "../../src/webhooks/store/pg-webhooks.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { freePort } from "../support/ports.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";
import { eventually, type RoleProcess, spawnRole } from "../support/role-process.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { insertExecution, setExecution } from "./support.js";

/**
 * A runner killed with SIGKILL while a delivery is in flight loses nothing: the claim's lease
 * ends, another runner sends the same event (same id) again, and the event settles.
 */
let db: TestDatabase;
let producer: Redis;
let receiver: WebhookReceiver;
let env: Record<string, string>;
const prefix = testRedisPrefix(import.meta.url);
const roles: RoleProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  producer = new Redis(redisUrl(), { maxRetriesPerRequest: 3 });
  receiver = await startWebhookReceiver();
  const dir = mkdtempSync(join(tmpdir(), "tenor-webhooks-crash-"));
  writeFileSync(
    join(dir, "tenor.yaml"),
    [
      "webhooks: { timeoutMs: 1000, maxAttempts: 5, backoff: { baseMs: 10, maxMs: 50 }, pollIntervalMs: 100, allowPrivateAddresses: true,",
      "  secretKeys: [{ id: k1, key: { env: TENOR_TEST_WEBHOOK_KEY } }] }",
      "durable:",
      "  sharding: { shardCount: 64, refreshIntervalMs: 200, livenessWindowMs: 1000 }",
    ].join("\n"),
  );
  env = {
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl(),
    TENOR_REDIS_PREFIX: prefix,
    TENOR_CONFIG: join(dir, "tenor.yaml"),
    TENOR_DATABASE_POOL_MAX: "4",
    TENOR_TEST_WEBHOOK_KEY: randomBytes(32).toString("base64"),
  };
});

afterAll(async () => {
  for (const role of roles) role.kill("SIGKILL");
  await Promise.all(roles.map((r) => r.exited));
  await receiver?.close();
  await deleteRedisPrefix(prefix, producer).catch(() => undefined);
  producer?.disconnect();
  await db?.drop();
});

async function startRunner(): Promise<RoleProcess> {
  const port = await freePort();
  const role = spawnRole({ ...env, DAPI_ROLE: "runner", TENOR_RUNNER_HEALTH_PORT: String(port) });
  roles.push(role);
  await eventually("runner ready", async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, 60_000);
  return role;
}

describe("dispatcher crash", () => {
  it("redelivers an event whose runner was killed mid-delivery", async () => {
    receiver.secret = newWebhookSecret();
    // Written in plain text, as before encryption: the first runner re-encrypts it at startup.
    const { id: subscriptionId } = await new PgWebhooks(db.pool).createSubscription({
      id: randomUUID(),
      orgId: "org-a",
      url: receiver.url,
      events: ["execution.completed"],
      description: null,
      secret: { keyId: null, sealed: receiver.secret },
      createdBy: null,
    });
    // The first request never gets an answer: the runner is mid-delivery when it dies.
    receiver.answer = ({ index }) => (index === 0 ? "hang" : { status: 200 });
    const first = await startRunner();
    const id = await insertExecution(db.pool, "org-a");
    await setExecution(db.pool, id, { status: "completed" });
    await eventually("the first attempt reached the receiver", () => receiver.received.length === 1);
    first.kill("SIGKILL");
    await first.exited;

    await startRunner();
    await eventually(
      "delivered by the second runner",
      async () => {
        const { rows } = await db.pool.query<{ status: string; settled: boolean }>(
          `SELECT d.status::text, e.dispatch_settled_at IS NOT NULL AS settled
             FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.execution_id = $1`,
          [id],
        );
        return rows[0]?.status === "delivered" && rows[0].settled;
      },
      30_000,
    );
    const [hung, redelivered] = receiver.received;
    expect(redelivered?.eventId).toBe(hung?.eventId);
    expect([hung?.signatureValid, redelivered?.signatureValid]).toEqual([true, true]);
    const { rows } = await db.pool.query<{ secret: string; key: string | null }>(
      "SELECT secret, secret_key_id AS key FROM webhook_subscriptions WHERE id = $1",
      [subscriptionId],
    );
    expect(rows[0]?.key).toBe("k1");
    expect(rows[0]?.secret).not.toContain(receiver.secret);
    expect(redelivered?.attempt).toBe(2);
    const { rows: receipts } = await db.pool.query<{
      attempt: number;
      error: string | null;
      status_code: number | null;
    }>(
      `SELECT r.attempt, r.error, r.status_code FROM webhook_receipts r
         JOIN webhook_deliveries d ON d.id = r.delivery_id JOIN webhook_events e ON e.id = d.event_id
        WHERE e.execution_id = $1 ORDER BY r.id`,
      [id],
    );
    expect(receipts).toEqual([
      { attempt: 1, error: "abandoned: the dispatcher stopped before the attempt ended", status_code: null },
      { attempt: 2, error: null, status_code: 200 },
    ]);
  });
});
