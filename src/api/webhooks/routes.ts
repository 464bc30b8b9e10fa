import { randomUUID } from "node:crypto";
import { type Request, type Response, Router } from "express";
import { TenorError } from "../../errors/tenor-error.js";
import { WEBHOOK_ERRORS } from "../../errors/webhook-errors.js";
import { urlRefusal } from "../../webhooks/address-policy.js";
import { WEBHOOK_TEST_EVENT_TYPE } from "../../webhooks/event-types.js";
import { WebhookSecretKeyring } from "../../webhooks/secret-keyring.js";
import { newWebhookSecret } from "../../webhooks/signature.js";
import type { WebhookStore } from "../../webhooks/webhook-store.js";
import type { ApiDeps } from "../api-deps.js";
import { API_ERRORS } from "../api-error-codes.js";
import { audited, nameAuditTarget } from "../audit/audit-trail.js";
import { guard, principalOf } from "../auth/authenticate.js";
import { handler, jsonBody, parseRequest } from "../http.js";
import { pageAfter, pageOf } from "../list-cursor.js";
import { apiError } from "../problem.js";
import { CreateSubscriptionBody, DeliveryParams, DeliveryQuery, SubscriptionParams } from "./schemas.js";

const notFound = (what: "subscription" | "delivery", id: string) =>
  new TenorError(
    what === "subscription"
      ? WEBHOOK_ERRORS.WEBHOOK_SUBSCRIPTION_NOT_FOUND
      : WEBHOOK_ERRORS.WEBHOOK_DELIVERY_NOT_FOUND,
    `no webhook ${what} ${id} in this organisation`,
    { details: { id } },
  );

/**
 * The webhooks module (docs/webhooks.md): an organisation's subscriptions, its deliveries and dead
 * letters, redelivery and test deliveries. Every statement matches the key's organisation; another
 * organisation's subscription or delivery answers 404 exactly like a missing one. Every change
 * (create, delete, test delivery, redelivery) is audited, refused ones included.
 */
export function webhooksRouter(deps: ApiDeps): Router {
  const router = Router();
  const store = deps.webhookStore;
  const allowPrivate = deps.webhooks?.allowPrivateAddresses ?? false;
  // No keyring: new subscriptions are refused (WEBHOOK_SECRET_KEY_MISSING), never stored in plain text.
  const keyring = deps.webhooks?.keyring ?? new WebhookSecretKeyring([], { plaintextAllowed: false });
  const body = jsonBody(deps.settings.bodyLimitBytes);

  router.post(
    "/v1/webhooks/subscriptions",
    // The id exists only once created: a refused create stays `new`.
    audited(deps, "webhook.create", () => "new"),
    ...guard(deps.keys, "webhooksManage"),
    ...body,
    handler(async (req: Request, res: Response) => {
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
    }),
  );
  router.get(
    "/v1/webhooks/subscriptions",
    ...guard(deps.keys, "webhooksRead"),
    handler(async (_req, res) => {
      res.json({ items: await store.listSubscriptions(principalOf(res).orgId) });
    }),
  );
  router.get(
    "/v1/webhooks/subscriptions/:id",
    ...guard(deps.keys, "webhooksRead"),
    handler(async (req, res) => {
      const { id } = parseRequest(SubscriptionParams, req.params, "path");
      const found = await store.getSubscription(principalOf(res).orgId, id);
      if (!found) throw notFound("subscription", id);
      res.json(found);
    }),
  );
  router.delete(
    "/v1/webhooks/subscriptions/:id",
    audited(deps, "webhook.delete", (req) => String(req.params.id)),
    ...guard(deps.keys, "webhooksManage"),
    handler(async (req, res) => {
      const { id } = parseRequest(SubscriptionParams, req.params, "path");
      if (!(await store.deleteSubscription(principalOf(res).orgId, id))) throw notFound("subscription", id);
      res.status(204).end();
    }),
  );
  router.post(
    "/v1/webhooks/subscriptions/:id/test",
    audited(deps, "webhook.test", (req) => String(req.params.id)),
    ...guard(deps.keys, "webhooksManage"),
    handler(async (req, res) => {
      const { id } = parseRequest(SubscriptionParams, req.params, "path");
      const created = await store.createTestDelivery(principalOf(res).orgId, id, (eventId) => ({
        id: eventId,
        type: WEBHOOK_TEST_EVENT_TYPE,
        createdAt: new Date().toISOString(),
        data: { subscriptionId: id },
      }));
      if (!created) throw notFound("subscription", id);
      res.status(202).json(created);
    }),
  );
  router.get(
    "/v1/webhooks/deliveries",
    ...guard(deps.keys, "webhooksRead"),
    handler(async (req, res) => listDeliveries(store, req, res)),
  );
  router.get(
    "/v1/webhooks/dead-letters",
    ...guard(deps.keys, "webhooksRead"),
    handler(async (req, res) => listDeliveries(store, req, res, "dead")),
  );
  router.get(
    "/v1/webhooks/deliveries/:id",
    ...guard(deps.keys, "webhooksRead"),
    handler(async (req, res) => {
      const { id } = parseRequest(DeliveryParams, req.params, "path");
      const found = await store.getDelivery(principalOf(res).orgId, id);
      if (!found) throw notFound("delivery", id);
      res.json(found);
    }),
  );
  router.post(
    "/v1/webhooks/deliveries/:id/redeliver",
    audited(deps, "webhook.redeliver", (req) => String(req.params.id)),
    ...guard(deps.keys, "webhooksManage"),
    handler(async (req, res) => {
      const { id } = parseRequest(DeliveryParams, req.params, "path");
      const outcome = await store.redeliver(principalOf(res).orgId, id);
      if (outcome === "not-found") throw notFound("delivery", id);
      if (outcome === "pending")
        throw new TenorError(WEBHOOK_ERRORS.WEBHOOK_DELIVERY_PENDING, `delivery ${id} is still pending`, {
          details: { id },
        });
      res.status(202).json(await store.getDelivery(principalOf(res).orgId, id));
    }),
  );
  return router;
}

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
