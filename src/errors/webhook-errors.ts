/** Stable codes of webhook delivery's errors (docs/webhooks.md). Never reworded once shipped. */
export const WEBHOOK_ERRORS = Object.freeze({
  /** A subscription URL that is not http(s), or names an address webhooks may not reach. */
  WEBHOOK_URL_REFUSED: "WEBHOOK_URL_REFUSED",
  /** No subscription of that id in the caller's organisation (or it was deleted). */
  WEBHOOK_SUBSCRIPTION_NOT_FOUND: "WEBHOOK_SUBSCRIPTION_NOT_FOUND",
  /** No delivery of that id in the caller's organisation. */
  WEBHOOK_DELIVERY_NOT_FOUND: "WEBHOOK_DELIVERY_NOT_FOUND",
  /** Redelivery asked of a delivery that is still pending (it will be attempted anyway). */
  WEBHOOK_DELIVERY_PENDING: "WEBHOOK_DELIVERY_PENDING",
  /** A `Tenor-Signature` header that is missing, malformed, too old or does not match the body. */
  WEBHOOK_SIGNATURE_INVALID: "WEBHOOK_SIGNATURE_INVALID",
  /**
   * No `webhooks.secretKeys` key to encrypt a new signing secret with (and plaintext secrets are
   * off), or a stored secret names a key id this process was not configured with.
   */
  WEBHOOK_SECRET_KEY_MISSING: "WEBHOOK_SECRET_KEY_MISSING",
  /** A stored signing secret that does not decrypt with the key of its id: the key was changed. */
  WEBHOOK_SECRET_UNREADABLE: "WEBHOOK_SECRET_UNREADABLE",
  /** The DNS lookup of a delivery resolved to an internal address: the attempt fails, never a route. */
  WEBHOOK_ADDRESS_REFUSED: "WEBHOOK_ADDRESS_REFUSED",
});

export type WebhookErrorCode = (typeof WEBHOOK_ERRORS)[keyof typeof WEBHOOK_ERRORS];

declare module "./error-code-registry.js" {
  interface ErrorCodeRegistry {
    webhooks: WebhookErrorCode;
  }
}
