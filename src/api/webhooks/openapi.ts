import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { z } from "zod";
import { authProblems, problem, rolesNote } from "../openapi/common.js";
import {
  CreatedSubscriptionSchema,
  CreateSubscriptionBody,
  DeliveryDetailSchema,
  DeliveryListSchema,
  DeliveryParams,
  DeliveryQuery,
  SubscriptionListSchema,
  SubscriptionParams,
  SubscriptionSchema,
  TestDeliverySchema,
} from "./schemas.js";

const json = <T extends z.ZodType>(schema: T) => ({ "application/json": { schema } });
const SUBSCRIPTION_404 = problem("WEBHOOK_SUBSCRIPTION_NOT_FOUND (also another organisation's).");
const DELIVERY_404 = problem("WEBHOOK_DELIVERY_NOT_FOUND (also another organisation's).");

export function registerWebhooksOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "post",
    path: "/v1/webhooks/subscriptions",
    operationId: "createWebhookSubscription",
    tags: ["webhooks"],
    summary: "Subscribe a URL to execution events",
    description:
      'Deliveries are POSTed with `Tenor-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, ' +
      "`Tenor-Event-Id` (dedupe by it: delivery is at least once) and `Tenor-Event-Type`. The secret is in this " +
      "response only. URLs must be http(s) without credentials; internal addresses (loopback, private, link-local) " +
      `are refused unless \`webhooks.allowPrivateAddresses\` is on. ${rolesNote("webhooksManage")}`,
    request: { body: { required: true, content: json(CreateSubscriptionBody) } },
    responses: {
      201: { description: "Created; the secret is shown once.", content: json(CreatedSubscriptionSchema) },
      400: problem("MALFORMED_JSON or REQUEST_INVALID (field `errors`: url, events, description)."),
      ...authProblems("webhooksManage"),
      415: problem("UNSUPPORTED_MEDIA_TYPE."),
      503: problem(
        "WEBHOOK_SECRET_KEY_MISSING: no webhooks.secretKeys is configured to encrypt the signing secret.",
      ),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/webhooks/subscriptions",
    operationId: "listWebhookSubscriptions",
    tags: ["webhooks"],
    summary: "The organisation's live subscriptions (never their secrets)",
    description: rolesNote("webhooksRead"),
    responses: {
      200: { description: "The subscriptions.", content: json(SubscriptionListSchema) },
      ...authProblems("webhooksRead"),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/webhooks/subscriptions/{id}",
    operationId: "getWebhookSubscription",
    tags: ["webhooks"],
    summary: "One subscription (never its secret)",
    description: rolesNote("webhooksRead"),
    request: { params: SubscriptionParams },
    responses: {
      200: { description: "The subscription.", content: json(SubscriptionSchema) },
      400: problem("REQUEST_INVALID."),
      ...authProblems("webhooksRead"),
      404: SUBSCRIPTION_404,
    },
  });
  registry.registerPath({
    method: "delete",
    path: "/v1/webhooks/subscriptions/{id}",
    operationId: "deleteWebhookSubscription",
    tags: ["webhooks"],
    summary: "Delete a subscription; its pending deliveries are cancelled",
    description: `Delivered and dead deliveries stay visible until retention. ${rolesNote("webhooksManage")}`,
    request: { params: SubscriptionParams },
    responses: {
      204: { description: "Deleted." },
      400: problem("REQUEST_INVALID."),
      ...authProblems("webhooksManage"),
      404: SUBSCRIPTION_404,
    },
  });
  registry.registerPath({
    method: "post",
    path: "/v1/webhooks/subscriptions/{id}/test",
    operationId: "testWebhookSubscription",
    tags: ["webhooks"],
    summary: "Send a `webhook.test` event to the subscription",
    description: `Delivered like any event; kept by retention. ${rolesNote("webhooksManage")}`,
    request: { params: SubscriptionParams },
    responses: {
      202: { description: "Queued for delivery.", content: json(TestDeliverySchema) },
      400: problem("REQUEST_INVALID."),
      ...authProblems("webhooksManage"),
      404: SUBSCRIPTION_404,
    },
  });
  for (const [path, operationId, summary] of [
    [
      "/v1/webhooks/deliveries",
      "listWebhookDeliveries",
      "Deliveries, newest first (filter by subscription and status)",
    ],
    [
      "/v1/webhooks/dead-letters",
      "listWebhookDeadLetters",
      "The dead-letter view: deliveries whose attempts ran out",
    ],
  ] as const) {
    registry.registerPath({
      method: "get",
      path,
      operationId,
      tags: ["webhooks"],
      summary,
      description: rolesNote("webhooksRead"),
      request: { query: DeliveryQuery },
      responses: {
        200: { description: "A page of deliveries.", content: json(DeliveryListSchema) },
        400: problem("REQUEST_INVALID (field `errors`)."),
        ...authProblems("webhooksRead"),
      },
    });
  }
  registry.registerPath({
    method: "get",
    path: "/v1/webhooks/deliveries/{id}",
    operationId: "getWebhookDelivery",
    tags: ["webhooks"],
    summary: "One delivery with its body and a receipt per attempt",
    description: rolesNote("webhooksRead"),
    request: { params: DeliveryParams },
    responses: {
      200: { description: "The delivery.", content: json(DeliveryDetailSchema) },
      400: problem("REQUEST_INVALID."),
      ...authProblems("webhooksRead"),
      404: DELIVERY_404,
    },
  });
  registry.registerPath({
    method: "post",
    path: "/v1/webhooks/deliveries/{id}/redeliver",
    operationId: "redeliverWebhook",
    tags: ["webhooks"],
    summary: "Send a finished delivery again (same event id, fresh attempt budget)",
    description: rolesNote("webhooksManage"),
    request: { params: DeliveryParams },
    responses: {
      202: { description: "Pending again.", content: json(DeliveryDetailSchema) },
      400: problem("REQUEST_INVALID."),
      ...authProblems("webhooksManage"),
      404: problem("WEBHOOK_DELIVERY_NOT_FOUND (also another organisation's, or a deleted subscription's)."),
      409: problem("WEBHOOK_DELIVERY_PENDING: it has not finished; it will be attempted anyway."),
    },
  });
}
