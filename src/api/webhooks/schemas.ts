import { z } from "zod";
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE } from "../../webhooks/event-types.js";
import {
  noOtherParameters,
  pageCursor,
  pageLimit,
  pgText,
  queryEnum,
  queryPattern,
  UUID_PATTERN,
} from "../query-params.js";

const uuid = z.string().regex(UUID_PATTERN, "must be a UUID");

/** The body of `POST /v1/webhooks/subscriptions`. The organisation comes from the key. */
export const CreateSubscriptionBody = z
  .object({
    url: z
      .string({ error: "is required" })
      .max(2_048, "must be at most 2048 characters")
      .meta({ description: "http(s) URL every delivery is POSTed to. Redirects are not followed." }),
    events: z
      .array(z.enum(WEBHOOK_EVENT_TYPES, `must be one of ${WEBHOOK_EVENT_TYPES.join(", ")}`), {
        error: "is required",
      })
      .min(1, "must name at least one event type")
      .refine((v) => new Set(v).size === v.length, "must not repeat an event type"),
    description: pgText(500).optional(),
  })
  .strict()
  .meta({ id: "WebhookSubscriptionRequest" });

export const SubscriptionSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({ id: "WebhookSubscription" });

export const CreatedSubscriptionSchema = SubscriptionSchema.extend({
  secret: z.string().meta({
    description: "The HMAC-SHA256 signing secret (`whsec_...`). Shown in this response only; never again.",
  }),
}).meta({ id: "WebhookSubscriptionCreated" });

export const SubscriptionListSchema = z
  .object({ items: z.array(SubscriptionSchema) })
  .meta({ id: "WebhookSubscriptionList" });

export const SubscriptionParams = z.object({ id: uuid }).strict();
export const DeliveryParams = z.object({ id: uuid }).strict();

const STATUSES = ["pending", "delivered", "dead", "cancelled"] as const;

const DeliveryListParameters = {
  subscriptionId: queryPattern(UUID_PATTERN, "must be a UUID")
    .optional()
    .meta({ description: "Only this subscription's deliveries.", type: "string", format: "uuid" }),
  executionId: queryPattern(UUID_PATTERN, "must be a UUID")
    .optional()
    .meta({ description: "Only deliveries of this execution's events.", type: "string", format: "uuid" }),
  eventId: queryPattern(UUID_PATTERN, "must be a UUID").optional().meta({
    description: "Only deliveries of this event (one per subscription).",
    type: "string",
    format: "uuid",
  }),
  status: queryEnum(STATUSES)
    .optional()
    .meta({ description: "Only deliveries in this status.", type: "string", enum: [...STATUSES] }),
  limit: pageLimit,
  cursor: pageCursor,
};

/** `GET /v1/webhooks/deliveries` and `/dead-letters`: filters combine with AND, newest first. */
export const DeliveryQuery = z
  .object(DeliveryListParameters)
  .catchall(noOtherParameters(Object.keys(DeliveryListParameters)))
  .meta({ id: "WebhookDeliveryListQuery" });

export const DeliverySchema = z
  .object({
    id: z.string(),
    eventId: z.string().meta({ description: "Also the `Tenor-Event-Id` header: receivers dedupe by it." }),
    eventType: z
      .string()
      .meta({ description: `${WEBHOOK_EVENT_TYPES.join(", ")} or ${WEBHOOK_TEST_EVENT_TYPE}.` }),
    executionId: z.string().nullable(),
    subscriptionId: z.string(),
    status: z.enum(STATUSES),
    attempts: z.number().int(),
    nextAttemptAt: z.string().nullable(),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    test: z.boolean(),
    createdAt: z.string(),
    finishedAt: z.string().nullable(),
    eventSettledAt: z.string().nullable().meta({
      description:
        "When every delivery of the event reached a final state (delivered, dead or cancelled); null while any is pending, again after a redelivery.",
    }),
  })
  .meta({ id: "WebhookDelivery" });

export const DeliveryListSchema = z
  .object({ items: z.array(DeliverySchema), nextCursor: z.string().nullable() })
  .meta({ id: "WebhookDeliveryList" });

export const DeliveryDetailSchema = DeliverySchema.extend({
  payload: z.unknown().meta({ description: "The JSON body every attempt sends." }),
  receipts: z.array(
    z.object({
      attempt: z
        .number()
        .int()
        .meta({ description: "1 for the first attempt; a redelivery counts from 1 again." }),
      state: z.enum(["in_flight", "completed", "abandoned"]).meta({
        description:
          "completed: its outcome is recorded. in_flight: the delivery's latest attempt, within its lease. abandoned: its dispatcher stopped before the outcome (a later attempt started, the lease ended or the delivery moved on); it counts toward maxAttempts.",
      }),
      startedAt: z.string(),
      durationMs: z.number().int().nullable().meta({ description: "Null unless completed." }),
      statusCode: z.number().int().nullable(),
      error: z.string().nullable(),
      response: z.string().nullable().meta({ description: "The first 512 bytes of the answer." }),
    }),
  ),
}).meta({ id: "WebhookDeliveryDetail" });

export const TestDeliverySchema = z
  .object({ eventId: z.string(), deliveryId: z.string() })
  .meta({ id: "WebhookTestDelivery" });
