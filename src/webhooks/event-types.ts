/**
 * The event types a subscription may name (docs/webhooks.md, "Events"). The capture trigger in
 * prisma/migrations/*_webhooks writes the same strings; a new type is added in both places.
 */
export const WEBHOOK_EVENT_TYPES = [
  "execution.completed",
  "execution.failed",
  "execution.waiting",
  "execution.suspended",
  /** The execution's `progress.milestone` changed (chain writes: accepted, submitted, final, indexed). */
  "execution.milestone",
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The type of a test delivery asked for through the API: sent to one subscription, kept by retention. */
export const WEBHOOK_TEST_EVENT_TYPE = "webhook.test";

/** Headers of every delivery. */
export const WEBHOOK_HEADERS = {
  signature: "Tenor-Signature",
  /** The event id: the same on every attempt and every redelivery, so receivers dedupe by it. */
  eventId: "Tenor-Event-Id",
  eventType: "Tenor-Event-Type",
  /** The delivery's attempt number, from 1. */
  attempt: "Tenor-Delivery-Attempt",
} as const;
