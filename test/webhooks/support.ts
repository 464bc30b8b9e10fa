import { randomBytes, randomUUID } from "node:crypto";
import type { Pool } from "pg";
import { WebhookSecretKeyring } from "../../src/webhooks/secret-keyring.js";
import { newWebhookSecret } from "../../src/webhooks/signature.js";
import { PgWebhooks, type WebhookSubscriptionRecord } from "../../src/webhooks/store/pg-webhooks.js";
import type { WebhookSettings } from "../../src/webhooks/webhook-dispatcher.js";
import { waitUntil } from "../support/processes.js";

/** Fast dispatcher settings for tests: short timeout and backoff, loopback receivers allowed. */
export const TEST_WEBHOOK_SETTINGS: WebhookSettings = {
  timeoutMs: 400,
  maxAttempts: 4,
  backoff: { baseMs: 10, maxMs: 40 },
  replayWindowSeconds: 300,
  concurrency: 4,
  pollIntervalMs: 50,
  allowPrivateAddresses: true,
  secretKeys: [],
  plaintextSecrets: false,
};

/** A keyring with one random key (id `test-1`), as a runner with `webhooks.secretKeys` has. */
export const TEST_KEYRING = new WebhookSecretKeyring([{ id: "test-1", key: randomBytes(32) }], {
  plaintextAllowed: false,
});

/** Inserts a subscription as the API does: a fresh id, its secret sealed by `keyring`. */
export function createTestSubscription(
  pool: Pool,
  input: { orgId: string; url: string; events: string[]; secret: string },
  keyring: WebhookSecretKeyring = TEST_KEYRING,
): Promise<WebhookSubscriptionRecord> {
  const id = randomUUID();
  return new PgWebhooks(pool).createSubscription({
    id,
    orgId: input.orgId,
    url: input.url,
    events: input.events,
    description: null,
    secret: keyring.seal(id, input.secret),
    createdBy: null,
  });
}

/**
 * Gives the test receiver a fresh signing secret and subscribes it for `orgId` (loopback receivers
 * are internal addresses the API refuses, so the row is written directly).
 */
export function subscribeReceiver(
  pool: Pool,
  receiver: { url: string; secret: string },
  events: string[] = ["execution.completed"],
  orgId = "org-a",
): Promise<WebhookSubscriptionRecord> {
  receiver.secret = newWebhookSecret();
  return createTestSubscription(pool, { orgId, url: receiver.url, events, secret: receiver.secret });
}

/** Inserts a running execution row of `orgId`; its status and progress are then changed by hand. */
export async function insertExecution(
  pool: Pool,
  orgId: string,
  workflow = "test.webhooks",
): Promise<string> {
  const id = randomUUID();
  await pool.query(
    `INSERT INTO executions (id, workflow, workflow_version, org_id, status, input)
     VALUES ($1, $2, 1, $3, 'running', '{}')`,
    [id, workflow, orgId],
  );
  return id;
}

/** Moves an execution as the engine's statements do (status, failure, progress). */
export async function setExecution(
  pool: Pool,
  id: string,
  change: { status?: string; progress?: Record<string, unknown>; failure?: Record<string, unknown> },
): Promise<void> {
  await pool.query(
    `UPDATE executions SET status = COALESCE($2::"ExecutionStatus", status),
            progress = COALESCE($3::jsonb, progress), failure = COALESCE($4::jsonb, failure)
      WHERE id = $1`,
    [
      id,
      change.status ?? null,
      change.progress ? JSON.stringify(change.progress) : null,
      change.failure ? JSON.stringify(change.failure) : null,
    ],
  );
}

/** Polls `probe` every 25 ms until it is true; the failure names what it waited for. */
export async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  await waitUntil(what, probe, { timeoutMs, intervalMs: 25 });
}
