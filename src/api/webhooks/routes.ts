import { randomUUID } from "node:crypto";
import type { Request, Response } from "express";
import type { z } from "zod";
import { TenorError } from "../../errors/tenor-error.js";
import { WEBHOOK_ERRORS } from "../../errors/webhook-errors.js";
import { urlRefusal } from "../../webhooks/address-policy.js";
import { WEBHOOK_TEST_EVENT_TYPE } from "../../webhooks/event-types.js";
import { WebhookSecretKeyring } from "../../webhooks/secret-keyring.js";
import { newWebhookSecret } from "../../webhooks/signature.js";
import type { WebhookStore } from "../../webhooks/webhook-store.js";
import type { ApiDeps } from "../api-deps.js";
import { API_ERRORS } from "../api-error-codes.js";
import { nameAuditTarget } from "../audit/audit-trail.js";
import { principalOf } from "../auth/authenticate.js";
import { parseRequest } from "../http.js";
import { pageAfter, pageOf } from "../list-cursor.js";
import { problem, rolesNote } from "../openapi/common.js";
import { apiError } from "../problem.js";
import { defineRoute, type RouteDeclaration } from "../route.js";
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

const notFound = (what: "subscription" | "delivery", id: string) =>
  new TenorError(
    what === "subscription"
      ? WEBHOOK_ERRORS.WEBHOOK_SUBSCRIPTION_NOT_FOUND
      : WEBHOOK_ERRORS.WEBHOOK_DELIVERY_NOT_FOUND,
    `no webhook ${what} ${id} in this organisation`,
    { details: { id } },
  );

const json = <T extends z.ZodType>(schema: T) => ({ "application/json": { schema } });
const SUBSCRIPTION_404 = problem("WEBHOOK_SUBSCRIPTION_NOT_FOUND (also another organisation's).");
const DELIVERY_404 = problem("WEBHOOK_DELIVERY_NOT_FOUND (also another organisation's).");

/** What the webhook handlers share: the store, the address policy switch and the secrets keyring. */
function webhookParts(deps: ApiDeps) {
  const store = deps.webhookStore;
  const allowPrivate = deps.webhooks?.allowPrivateAddresses ?? false;
  // No keyring: new subscriptions are refused (WEBHOOK_SECRET_KEY_MISSING), never stored in plain text.
  const keyring = deps.webhooks?.keyring ?? new WebhookSecretKeyring([], { plaintextAllowed: false });
  return { store, allowPrivate, keyring };
}

/**
 * The webhooks module (docs/webhooks.md): an organisation's subscriptions, its deliveries and dead
 * letters, redelivery and test deliveries. Every statement matches the key's organisation; another
 * organisation's subscription or delivery answers 404 exactly like a missing one. Every change
 * (create, delete, test delivery, redelivery) is audited, refused ones included.
 */
export const WEBHOOK_ROUTES: readonly RouteDeclaration[] = [
  defineRoute({
    method: "post",
    path: "/v1/webhooks/subscriptions",
    permission: "webhooksManage",
    // The id exists only once created: a refused create stays `new`.
    audit: { action: "webhook.create", target: () => "new" },
    jsonBody: true,
    openapi: {
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
        415: problem("UNSUPPORTED_MEDIA_TYPE."),
        503: problem(
          "WEBHOOK_SECRET_KEY_MISSING: no webhooks.secretKeys is configured to encrypt the signing secret.",
        ),
      },
    },
    handler: (deps) => {
      const { store, allowPrivate, keyring } = webhookParts(deps);
      return async (req: Request, res: Response) => {
        const principal = principalOf(res);
        const input = parseRequest(CreateSubscriptionBody, req.body, "body");
        const refusal = urlRefusal(input.url, allowPrivate);
        if (refusal)
          throw apiError(
            API_ERRORS.REQUEST_INVALID,
            `body.url: ${refusal} (got ${JSON.stringify(input.url)})`,
            {
              errors: [{ pointer: "body.url", message: refusal }],
            },
          );
        const id = randomUUID();
        const secret = newWebhookSecret();
        const created = await store.createSubscription({
          id,
          orgId: principal.orgId,
          url: input.url,
          events: input.events,
          description: input.description ?? null,
          secret: keyring.seal(id, secret),
          createdBy: principal.keyId,
        });
        nameAuditTarget(res, created.id);
        res
          .status(201)
          .location(`/v1/webhooks/subscriptions/${created.id}`)
          .json({ ...created, secret });
      };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/webhooks/subscriptions",
    permission: "webhooksRead",
    openapi: {
      operationId: "listWebhookSubscriptions",
      tags: ["webhooks"],
      summary: "The organisation's live subscriptions (never their secrets)",
      description: rolesNote("webhooksRead"),
      responses: {
        200: { description: "The subscriptions.", content: json(SubscriptionListSchema) },
      },
    },
    handler: (deps) => {
      const { store } = webhookParts(deps);
      return async (_req, res) => {
        res.json({ items: await store.listSubscriptions(principalOf(res).orgId) });
      };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/webhooks/subscriptions/{id}",
    permission: "webhooksRead",
    openapi: {
      operationId: "getWebhookSubscription",
      tags: ["webhooks"],
      summary: "One subscription (never its secret)",
      description: rolesNote("webhooksRead"),
      request: { params: SubscriptionParams },
      responses: {
        200: { description: "The subscription.", content: json(SubscriptionSchema) },
        400: problem("REQUEST_INVALID."),
        404: SUBSCRIPTION_404,
      },
    },
    handler: (deps) => {
      const { store } = webhookParts(deps);
      return async (req, res) => {
        const { id } = parseRequest(SubscriptionParams, req.params, "path");
        const found = await store.getSubscription(principalOf(res).orgId, id);
        if (!found) throw notFound("subscription", id);
        res.json(found);
      };
    },
  }),
  defineRoute({
    method: "delete",
    path: "/v1/webhooks/subscriptions/{id}",
    permission: "webhooksManage",
    audit: { action: "webhook.delete", target: (req) => String(req.params.id) },
    openapi: {
      operationId: "deleteWebhookSubscription",
      tags: ["webhooks"],
      summary: "Delete a subscription; its pending deliveries are cancelled",
      description: `Delivered and dead deliveries stay visible until retention. ${rolesNote("webhooksManage")}`,
      request: { params: SubscriptionParams },
      responses: {
        204: { description: "Deleted." },
        400: problem("REQUEST_INVALID."),
        404: SUBSCRIPTION_404,
      },
    },
    handler: (deps) => {
      const { store } = webhookParts(deps);
      return async (req, res) => {
        const { id } = parseRequest(SubscriptionParams, req.params, "path");
        if (!(await store.deleteSubscription(principalOf(res).orgId, id))) throw notFound("subscription", id);
        res.status(204).end();
      };
    },
  }),
  defineRoute({
    method: "post",
    path: "/v1/webhooks/subscriptions/{id}/test",
    permission: "webhooksManage",
    audit: { action: "webhook.test", target: (req) => String(req.params.id) },
    openapi: {
      operationId: "testWebhookSubscription",
      tags: ["webhooks"],
      summary: "Send a `webhook.test` event to the subscription",
      description: `Delivered like any event; kept by retention. ${rolesNote("webhooksManage")}`,
      request: { params: SubscriptionParams },
      responses: {
        202: { description: "Queued for delivery.", content: json(TestDeliverySchema) },
        400: problem("REQUEST_INVALID."),
        404: SUBSCRIPTION_404,
      },
    },
    handler: (deps) => {
      const { store } = webhookParts(deps);
      return async (req, res) => {
        const { id } = parseRequest(SubscriptionParams, req.params, "path");
        const created = await store.createTestDelivery(principalOf(res).orgId, id, (eventId) => ({
          id: eventId,
          type: WEBHOOK_TEST_EVENT_TYPE,
          createdAt: new Date().toISOString(),
          data: { subscriptionId: id },
        }));
        if (!created) throw notFound("subscription", id);
        res.status(202).json(created);
      };
    },
  }),
  deliveryListRoute(
    "/v1/webhooks/deliveries",
    "listWebhookDeliveries",
    "Deliveries, newest first (filter by subscription and status)",
  ),
  deliveryListRoute(
    "/v1/webhooks/dead-letters",
    "listWebhookDeadLetters",
    "The dead-letter view: deliveries whose attempts ran out",
    "dead",
  ),
  defineRoute({
    method: "get",
    path: "/v1/webhooks/deliveries/{id}",
    permission: "webhooksRead",
    openapi: {
      operationId: "getWebhookDelivery",
      tags: ["webhooks"],
      summary: "One delivery with its body and a receipt per attempt",
      description: rolesNote("webhooksRead"),
      request: { params: DeliveryParams },
      responses: {
        200: { description: "The delivery.", content: json(DeliveryDetailSchema) },
        400: problem("REQUEST_INVALID."),
        404: DELIVERY_404,
      },
    },
    handler: (deps) => {
      const { store } = webhookParts(deps);
      return async (req, res) => {
        const { id } = parseRequest(DeliveryParams, req.params, "path");
        const found = await store.getDelivery(principalOf(res).orgId, id);
        if (!found) throw notFound("delivery", id);
        res.json(found);
      };
    },
  }),
  defineRoute({
    method: "post",
    path: "/v1/webhooks/deliveries/{id}/redeliver",
    permission: "webhooksManage",
    audit: { action: "webhook.redeliver", target: (req) => String(req.params.id) },
    openapi: {
      operationId: "redeliverWebhook",
      tags: ["webhooks"],
      summary: "Send a finished delivery again (same event id, fresh attempt budget)",
      description: rolesNote("webhooksManage"),
      request: { params: DeliveryParams },
      responses: {
        202: { description: "Pending again.", content: json(DeliveryDetailSchema) },
        400: problem("REQUEST_INVALID."),
        404: problem(
          "WEBHOOK_DELIVERY_NOT_FOUND (also another organisation's, or a deleted subscription's).",
        ),
        409: problem("WEBHOOK_DELIVERY_PENDING: it has not finished; it will be attempted anyway."),
      },
    },
    handler: (deps) => {
      const { store } = webhookParts(deps);
      return async (req, res) => {
        const { id } = parseRequest(DeliveryParams, req.params, "path");
        const outcome = await store.redeliver(principalOf(res).orgId, id);
        if (outcome === "not-found") throw notFound("delivery", id);
        if (outcome === "pending")
          throw new TenorError(WEBHOOK_ERRORS.WEBHOOK_DELIVERY_PENDING, `delivery ${id} is still pending`, {
            details: { id },
          });
        res.status(202).json(await store.getDelivery(principalOf(res).orgId, id));
      };
    },
  }),
];

/** Deliveries newest first, cursor-paged; `dead` fixed for the dead-letter view. */
async function listDeliveries(
  store: WebhookStore,
  req: Request,
  res: Response,
  status?: "dead",
): Promise<void> {
  const query = parseRequest(DeliveryQuery, req.query, "query");
  if (status !== undefined && query.status !== undefined && query.status !== status)
    throw apiError(
      API_ERRORS.REQUEST_INVALID,
      `query.status: the dead-letter view lists status dead only (got ${query.status})`,
      {
        errors: [{ pointer: "query.status", message: "must be dead here" }],
      },
    );
  const after = pageAfter(query.cursor);
  const rows = await store.listDeliveries({
    orgId: principalOf(res).orgId,
    limit: query.limit + 1,
    ...(query.subscriptionId !== undefined ? { subscriptionId: query.subscriptionId } : {}),
    ...(query.executionId !== undefined ? { executionId: query.executionId } : {}),
    ...(query.eventId !== undefined ? { eventId: query.eventId } : {}),
    ...((status ?? query.status) !== undefined ? { status: status ?? query.status } : {}),
    ...(after ? { after } : {}),
  });
  const { page, nextCursor } = pageOf(rows, query.limit);
  res.json({ items: page, nextCursor });
}

/** A page of deliveries: every one, or only those of one status (the dead-letter view). */
function deliveryListRoute(
  path: string,
  operationId: string,
  summary: string,
  status?: Parameters<typeof listDeliveries>[3],
): RouteDeclaration {
  return defineRoute({
    method: "get",
    path,
    permission: "webhooksRead",
    openapi: {
      operationId,
      tags: ["webhooks"],
      summary,
      description: rolesNote("webhooksRead"),
      request: { query: DeliveryQuery },
      responses: {
        200: { description: "A page of deliveries.", content: json(DeliveryListSchema) },
        400: problem("REQUEST_INVALID (field `errors`)."),
      },
    },
    handler: (deps) => {
      const { store } = webhookParts(deps);
      return async (req, res) => listDeliveries(store, req, res, status);
    },
  });
}
