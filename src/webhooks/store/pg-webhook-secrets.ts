import type { Pool } from "pg";

/**
 * A signing secret as stored: `sealed` is the encrypted secret when `keyId` names the
 * `webhooks.secretKeys` key that sealed it, the secret itself when `keyId` is null (a row written
 * before encryption, or under `webhooks.plaintextSecrets`). src/webhooks/secret-keyring.ts seals
 * and opens it; the store never sees a key.
 */
export interface SealedWebhookSecret {
  keyId: string | null;
  sealed: string;
}

/** One subscription's stored secret, for re-encryption. */
export interface StoredWebhookSecret {
  subscriptionId: string;
  secret: SealedWebhookSecret;
}

/**
 * Subscription secrets for the runners' re-encryption pass (docs/webhooks.md, "Secrets"): the
 * rows not sealed by the current key, and a compare-and-set rewrite of one of them. Deleted
 * subscriptions count too: their secrets stay in the table until retention.
 */
export class PgWebhookSecrets {
  constructor(private readonly pool: Pool) {}

  /**
   * Up to `limit` secrets not sealed by `keyId` (plaintext ones included), in id order after
   * `afterId`, so a pass that skips a row it cannot read still moves on.
   */
  async notSealedBy(keyId: string, afterId: string | null, limit: number): Promise<StoredWebhookSecret[]> {
    const { rows } = await this.pool.query<{ id: string; sealed: string; key_id: string | null }>(
      `SELECT id, secret AS sealed, secret_key_id AS key_id FROM webhook_subscriptions
        WHERE secret_key_id IS DISTINCT FROM $1 AND ($2::uuid IS NULL OR id > $2::uuid)
        ORDER BY id LIMIT $3`,
      [keyId, afterId, limit],
    );
    return rows.map((r) => ({ subscriptionId: r.id, secret: { sealed: r.sealed, keyId: r.key_id } }));
  }

  /**
   * Replaces a secret with `next` only while it is still `previous` (another runner's pass may
   * have rewritten it first). True when this call rewrote it.
   */
  async replace(
    subscriptionId: string,
    previous: SealedWebhookSecret,
    next: SealedWebhookSecret,
  ): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE webhook_subscriptions SET secret = $4, secret_key_id = $5
        WHERE id = $1 AND secret = $2 AND secret_key_id IS NOT DISTINCT FROM $3`,
      [subscriptionId, previous.sealed, previous.keyId, next.sealed, next.keyId],
    );
    return rowCount === 1;
  }
}
