/**
 * The webhooks storage as the API sees it: an organisation's subscriptions, deliveries and dead
 * letters. The host builds the store (`src/roles`) and hands it to the routes through `ApiDeps`;
 * routes import this module, never `./store/`.
 */
export type {
  DeliveryFilter,
  PgWebhooks as WebhookStore,
  WebhookDeliveryRecord,
  WebhookDeliveryStatus,
  WebhookReceiptRecord,
  WebhookReceiptState,
  WebhookSubscriptionRecord,
} from "./store/pg-webhooks.js";
