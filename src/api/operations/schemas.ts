import { z } from "zod";
import { ENGINE_ERRORS } from "../../engine/error-codes.js";
import { OPERATION_ACTIONS } from "../../store/pg-operations.js";
import { CANCEL_REASON_MAX, CancelActorSchema, LIST_STATUSES } from "../executions/schemas.js";
import { pageLimit, pgText, pgTimestamp } from "../query-params.js";

/**
 * Schemas of bulk operations by query (`/v1/operations`): the handlers parse with them and the
 * OpenAPI document is generated from them.
 */

/** A stable error code as the engine and API write them (the list's `code=` rule). */
const FAILURE_CODE_PATTERN = /^[A-Z][A-Z0-9_]{0,63}$/;

export const OperationFilterSchema = z
  .object({
    workflow: pgText(200).optional(),
    version: z.number().int().min(1).optional().meta({ description: "The workflow version the run is on." }),
    status: z
      .array(z.enum(LIST_STATUSES))
      .min(1)
      .optional()
      .meta({ description: "Any of these statuses; `held` is suspended with a hold." }),
    code: z
      .string()
      .regex(
        FAILURE_CODE_PATTERN,
        "must be a stable error code: 1–64 of A–Z, 0–9 and _, starting with a letter",
      )
      .optional()
      .meta({
        description: "The failure's code, or a held run's hold code.",
        example: ENGINE_ERRORS.RECOVERY_EXHAUSTED,
      }),
    key: pgText().optional().meta({ description: "Keyed-serialization key." }),
    createdAfter: pgTimestamp.optional().meta({ description: "Inclusive lower bound of createdAt." }),
    createdBefore: pgTimestamp.optional().meta({ description: "Exclusive upper bound of createdAt." }),
  })
  .strict()
  .meta({
    id: "OperationFilter",
    description: "Fields combine with AND, as the executions list's filters do. At least one is required.",
  });

export const SignalSpecSchema = z
  .object({
    name: z
      .string()
      .min(1)
      .max(200)
      .refine((n) => !n.startsWith("$"), { error: 'names starting with "$" are reserved' }),
    payload: z.unknown().optional().meta({ description: "The signal's payload (null when absent)." }),
  })
  .strict()
  .meta({ id: "OperationSignal" });

/** The actions that keep a reason on every run they act on. */
const REASON_ACTIONS: readonly string[] = ["cancel", "pause", "reset-to-version"];

export const CreateOperationSchema = z
  .object({
    action: z.enum(OPERATION_ACTIONS),
    filter: OperationFilterSchema,
    reason: pgText(CANCEL_REASON_MAX).optional().meta({
      description:
        "A cancel's, a pause's or a reset-to-version's reason, kept on every run it cancels, pauses or resets. Required for `reset-to-version`.",
    }),
    signal: SignalSpecSchema.optional().meta({ description: "Required for `signal`, refused otherwise." }),
    dryRun: z
      .boolean()
      .optional()
      .meta({ description: "`true`: only count the runs the filter matches now; nothing is created." }),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.action === "signal" && body.signal === undefined)
      ctx.addIssue({ code: "custom", path: ["signal"], message: "is required when action is signal" });
    if (body.action !== "signal" && body.signal !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["signal"],
        message: `is only for action signal (got ${body.action})`,
      });
    if (body.action === "reset-to-version" && body.reason === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["reason"],
        message: "is required when action is reset-to-version",
      });
    if (!REASON_ACTIONS.includes(body.action) && body.reason !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["reason"],
        message: `is only for actions ${REASON_ACTIONS.join(", ")} (got ${body.action})`,
      });
  })
  .meta({ id: "CreateOperation" });

export const DryRunSchema = z
  .object({
    dryRun: z.literal(true),
    action: z.enum(OPERATION_ACTIONS),
    filter: OperationFilterSchema,
    matched: z.number().int().meta({ description: "Runs the filter matches now." }),
    maxItems: z.number().int().meta({ description: "The most one operation may act on." }),
  })
  .meta({ id: "OperationDryRun" });

export const OperationSchema = z
  .object({
    id: z.uuid(),
    action: z.enum(OPERATION_ACTIONS),
    filter: OperationFilterSchema,
    reason: z.string().nullable(),
    signal: SignalSpecSchema.nullable(),
    status: z.enum(["running", "completed", "aborted"]),
    total: z.number().int().meta({ description: "Runs the filter matched when the operation was created." }),
    succeeded: z.number().int(),
    failed: z.number().int().meta({ description: "Runs the action was refused for; see `.../failures`." }),
    pending: z.number().int().meta({ description: "Runs not yet acted on (left untouched once aborted)." }),
    createdBy: CancelActorSchema,
    abortRequestedBy: CancelActorSchema.nullable(),
    abortRequestedAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    finishedAt: z.string().nullable(),
  })
  .meta({ id: "Operation" });

export const OperationListSchema = z
  .object({ items: z.array(OperationSchema), nextCursor: z.string().nullable() })
  .meta({ id: "OperationList" });

export const OperationFailureSchema = z
  .object({
    executionId: z.uuid(),
    code: z.string().meta({
      description:
        "Stable code: EXECUTION_TERMINAL, EXECUTION_NOT_SUSPENDED, ...; a reset-to-version's are the single reset's (EXECUTION_NOT_RESETTABLE, RESET_SETS_ASIDE_DISPATCHED, RESET_PREFIX_NOT_REPLAYABLE, ...).",
    }),
    message: z.string(),
    at: z.string(),
  })
  .meta({ id: "OperationFailure" });

export const OperationFailureListSchema = z
  .object({ items: z.array(OperationFailureSchema), nextCursor: z.string().nullable() })
  .meta({ id: "OperationFailureList" });

export const OperationIdParams = z.object({ id: z.uuid().meta({ description: "Operation id (UUID)." }) });

export const OperationListQuerySchema = z
  .object({ limit: pageLimit, cursor: z.string().optional() })
  .strict();

export const FailureListQuerySchema = z
  .object({
    limit: pageLimit,
    cursor: z.uuid().optional().meta({ description: "`nextCursor` of the previous page." }),
  })
  .strict();
