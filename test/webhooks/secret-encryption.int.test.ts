import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/observability/logger.js";
import { resealWebhookSecrets } from "../../src/webhooks/reseal-secrets.js";
import { WebhookSecretKeyring } from "../../src/webhooks/secret-keyring.js";
import { newWebhookSecret } from "../../src/webhooks/signature.js";
import { PgWebhookDispatch } from "../../src/webhooks/store/pg-webhook-dispatch.js";
import { PgWebhookSecrets } from "../../src/webhooks/store/pg-webhook-secrets.js";
import { PgWebhooks } from "../../src/webhooks/store/pg-webhooks.js";
import { startWebhookDispatcher, type WebhookDispatcher } from "../../src/webhooks/webhook-dispatcher.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import {
  createTestSubscription,
  insertExecution,
  setExecution,
  TEST_WEBHOOK_SETTINGS,
  until,
} from "./support.js";

/**
 * Signing secrets at rest: the stored row never holds the secret, the dispatcher decrypts it to
 * sign (the receiver verifies), a rotated keyring still opens the old key's rows and seals new
 * ones with the new key, the runners' pass moves plaintext and old-key rows to the first key, and a
 * missing key fails the attempt naming the key without sending anything.
 */
const logger = createLogger({ level: "error" });
const k1 = { id: "k1", key: randomBytes(32) };
const k2 = { id: "k2", key: randomBytes(32) };
const keyring = (...keys: (typeof k1)[]) => new WebhookSecretKeyring(keys, { plaintextAllowed: false });

let db: TestDatabase;
let receiver: WebhookReceiver;
let dispatcher: WebhookDispatcher | undefined;
let org = "";

beforeAll(async () => {
  db = await createTestDatabase();
  receiver = await startWebhookReceiver();
});

afterEach(async () => {
  await dispatcher?.stop();
  dispatcher = undefined;
});

afterAll(async () => {
  await receiver?.close();
  await db?.drop();
});

/** A subscription of a fresh organisation, its secret sealed by `ring` (or stored plain: null). */
async function subscribe(ring: WebhookSecretKeyring | null): Promise<{ id: string; secret: string }> {
  org = `org-${randomUUID()}`;
  const secret = newWebhookSecret();
  receiver.secret = secret;
  const input = { orgId: org, url: receiver.url, events: ["execution.completed"], secret };
  if (ring !== null) return { id: (await createTestSubscription(db.pool, input, ring)).id, secret };
  const id = randomUUID();
  await new PgWebhooks(db.pool).createSubscription({
    ...input,
    id,
    description: null,
    secret: { keyId: null, sealed: secret },
    createdBy: null,
  });
  return { id, secret };
}

const stored = async (id: string) =>
  (
    await db.pool.query<{ secret: string; key: string | null; row: string }>(
      `SELECT secret, secret_key_id AS key, row_to_json(s)::text AS row FROM webhook_subscriptions s WHERE id = $1`,
      [id],
    )
  ).rows[0];

/** Completes an execution of the current organisation and waits for its delivery to end. */
async function deliverOne(ring: WebhookSecretKeyring): Promise<{ status: string; error: string | null }> {
  dispatcher = startWebhookDispatcher({
    store: new PgWebhookDispatch(db.pool),
    settings: TEST_WEBHOOK_SETTINGS,
    keyring: ring,
    logger,
  });
  const execution = await insertExecution(db.pool, org);
  await setExecution(db.pool, execution, { status: "completed" });
  let last: { status: string; error: string | null } | undefined;
  await until("the delivery's first attempt recorded", async () => {
    const { rows } = await db.pool.query<{ status: string; error: string | null; attempts: number }>(
      `SELECT d.status::text, d.last_error AS error, d.attempts FROM webhook_deliveries d
         JOIN webhook_events e ON e.id = d.event_id WHERE e.execution_id = $1`,
      [execution],
    );
    last = rows[0];
    return rows[0] !== undefined && (rows[0].status !== "pending" || rows[0].error !== null);
  });
  return last as { status: string; error: string | null };
}

describe("webhook signing secrets at rest", () => {
  it("never stores the secret; the dispatcher decrypts it and the receiver verifies the signature", async () => {
    const ring = keyring(k1);
    const { id, secret } = await subscribe(ring);
    const row = await stored(id);
    expect(row?.key).toBe("k1");
    expect(row?.row).not.toContain(secret.slice("whsec_".length));
    expect(await deliverOne(ring)).toMatchObject({ status: "delivered" });
    expect(receiver.received.at(-1)?.signatureValid).toBe(true);
  });

  it("rotates: the old key still decrypts, new secrets use the new key, the pass moves old rows", async () => {
    const old = await subscribe(keyring(k1));
    const rotated = keyring(k2, k1);
    expect(await deliverOne(rotated)).toMatchObject({ status: "delivered" });
    expect(receiver.received.at(-1)?.signatureValid).toBe(true);
    const fresh = await subscribe(rotated);
    expect((await stored(fresh.id))?.key).toBe("k2");

    const report = await resealWebhookSecrets({
      secrets: new PgWebhookSecrets(db.pool),
      keyring: rotated,
      logger,
    });
    expect(report.resealed).toBeGreaterThanOrEqual(1);
    const moved = await stored(old.id);
    expect(moved?.key).toBe("k2");
    // Once moved, the old key can go: the new key alone opens the row.
    expect(keyring(k2).open(old.id, { keyId: moved?.key ?? null, sealed: moved?.secret ?? "" })).toBe(
      old.secret,
    );
  });

  it("encrypts rows written before encryption, which are signed as plaintext until then", async () => {
    const legacy = await subscribe(null);
    expect(await deliverOne(keyring(k1))).toMatchObject({ status: "delivered" });
    expect(receiver.received.at(-1)?.signatureValid).toBe(true);
    await resealWebhookSecrets({ secrets: new PgWebhookSecrets(db.pool), keyring: keyring(k1), logger });
    const row = await stored(legacy.id);
    expect(row?.key).toBe("k1");
    expect(row?.row).not.toContain(legacy.secret.slice("whsec_".length));
    expect(keyring(k1).open(legacy.id, { keyId: "k1", sealed: row?.secret ?? "" })).toBe(legacy.secret);
  });

  it("fails the attempt naming the key when no configured key decrypts the secret, sending nothing", async () => {
    const { id } = await subscribe(keyring(k1));
    const before = receiver.received.length;
    const missing = await deliverOne(keyring(k2));
    expect(missing.error).toContain("WEBHOOK_SECRET_KEY_MISSING: the signing secret of subscription");
    expect(missing.error).toContain('webhooks.secretKeys id "k1", which is not configured here');
    await dispatcher?.stop();
    dispatcher = undefined;
    // A wrong key under the same id: unreadable, not a bad signature at the receiver.
    await db.pool.query(
      "UPDATE webhook_deliveries SET status = 'cancelled', finished_at = now() WHERE org_id = $1",
      [org],
    );
    const wrong = await deliverOne(keyring({ id: "k1", key: randomBytes(32) }));
    expect(wrong.error).toContain("WEBHOOK_SECRET_UNREADABLE: the signing secret of subscription");
    expect(receiver.received.length).toBe(before);
    // The pass leaves such a row as it is and goes on.
    const report = await resealWebhookSecrets({
      secrets: new PgWebhookSecrets(db.pool),
      keyring: keyring(k2),
      logger,
    });
    expect(report.unreadable).toBeGreaterThanOrEqual(1);
    expect((await stored(id))?.key).toBe("k1");
  });
});
