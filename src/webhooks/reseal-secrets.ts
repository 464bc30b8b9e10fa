import { toTenorError } from "../errors/tenor-error.js";
import type { Logger } from "../observability/logger.js";
import type { WebhookSecretKeyring } from "./secret-keyring.js";
import type { PgWebhookSecrets } from "./store/pg-webhook-secrets.js";

/** Rows one read of the pass takes. */
const BATCH = 100;

/** What one pass did. */
export interface ResealReport {
  /** Secrets rewritten under the first key (plaintext ones and older keys' ones). */
  resealed: number;
  /** Secrets left as they were because no configured key opens them (named in the log). */
  unreadable: number;
}

/**
 * Re-encrypts every subscription secret not sealed by the keyring's first key: plaintext rows
 * written before encryption, and rows of an older key after a rotation (docs/webhooks.md,
 * "Secrets"). A runner runs it once at startup, before its dispatcher; several runners at once are
 * safe, each rewrite being a compare-and-set. Does nothing without a key. A secret no configured
 * key opens stays as it was and is logged with its key id; the pass goes on.
 */
export async function resealWebhookSecrets(options: {
  secrets: PgWebhookSecrets;
  keyring: WebhookSecretKeyring;
  logger: Logger;
}): Promise<ResealReport> {
  const report: ResealReport = { resealed: 0, unreadable: 0 };
  const primary = options.keyring.primaryKeyId;
  if (primary === null) return report;
  const store = options.secrets;
  const logger = options.logger.child({ component: "webhooks" });
  let after: string | null = null;
  for (;;) {
    const rows = await store.notSealedBy(primary, after, BATCH);
    for (const row of rows) {
      let secret: string;
      try {
        secret = options.keyring.open(row.subscriptionId, row.secret);
      } catch (error) {
        report.unreadable += 1;
        logger.warn("webhook signing secret left as it is: no configured key decrypts it", {
          subscriptionId: row.subscriptionId,
          keyId: row.secret.keyId,
          error: toTenorError(error).message,
        });
        continue;
      }
      const next = options.keyring.seal(row.subscriptionId, secret);
      if (await store.replace(row.subscriptionId, row.secret, next)) report.resealed += 1;
    }
    if (rows.length < BATCH) break;
    after = rows.at(-1)?.subscriptionId ?? null;
  }
  return report;
}
