import { z } from "zod";
import { ENGINE_ERRORS } from "../../engine/error-codes.js";
import { WAIT_KINDS } from "../../engine/execution-store.js";
import { RecordedHistory } from "../../engine/recorded-history.js";
import { pageLimit, pgText, pgTimestamp } from "../query-params.js";
import { KeyQueueEntrySchema } from "./key-queue.js";

/**
 * Schemas of the executions module: the handlers parse requests with them and the OpenAPI
 * document is generated from them (src/api/executions/routes.ts), so the two cannot drift.
 */

export const ExecutionStatusSchema = z
  .enum(["running", "waiting", "suspended", "completed", "failed"])
  .meta({ id: "ExecutionStatus", description: "The five statuses of an execution." });

export const WaitSchema = z
  .object({
    kind: z.enum(WAIT_KINDS),
    name: z.string(),
    summary: z
      .string()
      .optional()
      .meta({
        description:
          "What it waits for in words, where the name is a code: a held run's `fix` wait reads " +
          "`a deploy of code that replays journal position 3` (its name stays `NON_DETERMINISM`); a paused " +
          "run's `pause` wait reads `paused by <subject>`. In " +
          "`GET /v1/executions/{id}`, a `child` wait whose child waits for gas funding reads " +
          "`gas funding: <address> needs <shortfall> wei more (holds <available> of <required>) on chain <id> " +
          "before <deadline>, for chain.transaction <child id>`.",
      }),
    position: z.number().int().optional(),
    until: z
      .string()
      .nullable()
      .meta({ description: "Deadline or wake time (ISO 8601), when there is one." }),
    details: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({
        description:
          "Kind-specific facts. For an approval: `params` (exactly what approvers approve), `paramsHash` " +
          "(SHA-256 of their canonical JSON, to send with a vote) and `quorum`. For a child: `childId`; in " +
          "`GET /v1/executions/{id}` also `funding` while the child, or a child of it, waits for gas funding: " +
          "`executionId`, `workflow`, `chainId`, `address` (the wallet to fund), `destination`, `requiredWei`, " +
          "`availableWei`, `shortfallWei`, `deadline`.",
      }),
  })
  .meta({ id: "Wait" });

export const FailureSchema = z
  .object({
    code: z.string().meta({ description: "Stable error code (never reworded)." }),
    message: z.string(),
    retryable: z.boolean(),
    guidance: z.string().meta({ description: "What a caller should do about it." }),
    details: z.record(z.string(), z.unknown()),
    escaped: z
      .array(z.string())
      .optional()
      .meta({
        description:
          "Paths in this failure whose text PostgreSQL could not store as given (U+0000, a lone surrogate): " +
          "stored with those characters written out as visible escapes (`\\u0000`).",
      }),
  })
  .meta({ id: "Failure" });

/** Who asked for a cancellation: the API key as it was when it asked. */
export const CancelActorSchema = z
  .object({
    keyId: z.uuid(),
    name: z.string().meta({ description: "The key's label." }),
    subject: z.string().meta({ description: "The person or system the key was issued to." }),
    role: z.string(),
  })
  .meta({ id: "CancelActor" });

export const CancellationSchema = z
  .object({
    requestedAt: z.string(),
    by: CancelActorSchema.nullable().meta({ description: "Null for a cancellation from outside the API." }),
    reason: z.string().nullable(),
  })
  .meta({ id: "Cancellation" });

/** Longest cancellation reason, in characters: the bound of an approval vote's reason. */
export const CANCEL_REASON_MAX = 2000;

/** `POST /v1/executions/{id}/cancel`: an optional body with the reason. */
export const CancelBodySchema = z
  .object({
    reason: pgText(CANCEL_REASON_MAX)
      .optional()
      .meta({
        description: `Why, 1–${CANCEL_REASON_MAX} characters; shown with the failure and kept in it.`,
      }),
  })
  .strict()
  .meta({ id: "CancelRequest" });

/** An operator's pause: when, by whom and why (docs/engine.md, "Pause"). */
export const PauseSchema = z
  .object({
    at: z.string().meta({ description: "When the pause was requested (ISO 8601)." }),
    by: CancelActorSchema.nullable().meta({ description: "The key that paused it; null outside the API." }),
    reason: z.string().nullable(),
  })
  .meta({ id: "Pause" });

/** `POST /v1/executions/{id}/pause`: an optional body with the reason. */
export const PauseBodySchema = z
  .object({
    reason: pgText(CANCEL_REASON_MAX)
      .optional()
      .meta({ description: `Why, 1–${CANCEL_REASON_MAX} characters; shown with the pause.` }),
  })
  .strict()
  .meta({ id: "PauseRequest" });

/** A reset as recorded: who, when, why, from where and onto which version. */
export const ResetSchema = z
  .object({
    id: z.uuid(),
    position: z.int().meta({ description: "The first position set aside." }),
    fromVersion: z.int(),
    toVersion: z.int().meta({ description: "The newest registered version, which the run continues on." }),
    fromStatus: z.string().meta({ description: "The run's status when it was reset: suspended or failed." }),
    at: z.string().meta({ description: "When (ISO 8601)." }),
    by: CancelActorSchema.nullable().meta({ description: "The key that reset it; null outside the API." }),
    reason: z.string().nullable(),
    setAside: z.int().meta({ description: "How many journal positions were set aside." }),
    signalsReturned: z.int().meta({
      description: "Signals those positions had consumed, given back to be consumed again in arrival order.",
    }),
  })
  .meta({ id: "Reset" });

/** A journal position a reset set aside, kept for the record. */
export const SetAsideEntrySchema = z
  .object({
    position: z.int(),
    kind: z.string(),
    name: z.string(),
    state: z.string(),
    completedAt: z.string().nullable(),
  })
  .meta({
    id: "SetAsideEntry",
    description: "Payloads are left out here; the evidence export carries them.",
  });

export const ResetHistorySchema = ResetSchema.extend({
  entries: z
    .array(SetAsideEntrySchema)
    .meta({ description: "The positions this reset set aside, as they were." }),
}).meta({ id: "ResetHistory" });

export const ExecutionSchema = z
  .object({
    id: z.uuid(),
    workflow: z.string(),
    workflowVersion: z.number().int(),
    status: ExecutionStatusSchema,
    waitingFor: z.array(WaitSchema).meta({ description: "What a waiting or suspended execution waits for." }),
    wakeAt: z.string().nullable(),
    progress: z.record(z.string(), z.unknown()).nullable(),
    result: z.unknown().meta({ description: "The workflow's output (encoded), once completed; else null." }),
    failure: FailureSchema.nullable(),
    hold: FailureSchema.nullable().meta({
      description:
        "Set while held (status `suspended`): for non-determinism, or a workflow version no runner has. Its " +
        "`guidance` names the journal position or version and the commands that end the hold.",
    }),
    key: z.string().nullable().meta({ description: "Keyed-serialization key." }),
    keyQueue: z
      .array(KeyQueueEntrySchema)
      .optional()
      .meta({
        description:
          "Only in `GET /v1/executions/{id}`: every key line the run is queued in (a keyed start, a nonce " +
          "reservation), with who holds the key, since when, and this run's position (1 is next). Empty when " +
          "it waits for no key.",
      }),
    resets: z
      .array(ResetHistorySchema)
      .optional()
      .meta({
        description:
          "Only in `GET /v1/executions/{id}`: every reset of the run, oldest first, with the journal positions it " +
          'set aside (kept for the record, no longer replayed; docs/engine.md, "Reset").',
      }),
    idempotencyKey: z.string().nullable(),
    idempotencyExpiresAt: z.string().nullable(),
    parentId: z.uuid().nullable(),
    cancelRequestedAt: z.string().nullable(),
    cancellation: CancellationSchema.nullable().meta({
      description:
        "Set once a cancellation was requested: when, by whom and why. The run then ends `failed` with code " +
        "CANCELLED, whose `details` keep the same facts.",
    }),
    pause: PauseSchema.nullable().meta({
      description:
        "Set while an operator has the run paused: it takes no new turn and, once its current step is done, " +
        "shows status `waiting` on a wait of kind `pause` until it is unpaused.",
    }),
    createdAt: z.string(),
    updatedAt: z.string(),
    completedAt: z.string().nullable(),
    links: z.object({ self: z.string(), steps: z.string(), approvals: z.string(), activity: z.string() }),
  })
  .meta({ id: "Execution" });

export const ExecutionListSchema = z
  .object({
    items: z.array(ExecutionSchema),
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: "Pass as `cursor` for the next page; null on the last." }),
  })
  .meta({ id: "ExecutionList" });

export const StepSchema = z
  .object({
    position: z.number().int(),
    kind: z
      .enum(["step", "sleep", "signal", "approval", "child", "condition", "now", "uuid", "random"])
      .meta({
        description:
          "`approval`: a wait for an approval, under the name the workflow declared (journaled as its reserved signal).",
      }),
    name: z.string(),
    state: z.enum(["pending", "ok", "error", "cancelled"]).meta({
      description: "`cancelled`: still pending when the execution ended; it will never resolve.",
    }),
    attempts: z.number().int(),
    startedAt: z.string(),
    completedAt: z.string().nullable().meta({
      description: "When it ended; a timer ends when the run went past it (null while it still sleeps).",
    }),
    durationMs: z.number().int().nullable().meta({
      description: "From its start to its end: a timer's or a wait's real length; null while open.",
    }),
    errorCode: z.string().nullable(),
    result: z
      .unknown()
      .optional()
      .meta({ description: "Only for roles that may read payloads (operator, admin)." }),
    error: z
      .unknown()
      .optional()
      .meta({ description: "Only for roles that may read payloads (operator, admin)." }),
  })
  .meta({ id: "Step" });

export const StepListSchema = z
  .object({ executionId: z.uuid(), payloadsIncluded: z.boolean(), steps: z.array(StepSchema) })
  .meta({ id: "StepList" });

/** A recorded history (src/engine/recorded-history.ts), for `tenor replay` and the test kit's `replayHistory`. */
export const HistorySchema = RecordedHistory.meta({
  id: "RecordedHistory",
  description:
    "One execution's journal with its workflow name and version, input and ending: the file `tenor replay` " +
    "replays against new code (docs/writing-workflows.md).",
});

export const SignalAcceptedSchema = z
  .object({
    executionId: z.uuid(),
    signal: z.string(),
    duplicate: z.boolean().meta({ description: "True when this Idempotency-Key was already delivered." }),
  })
  .meta({ id: "SignalAccepted" });

export const CancelAcceptedSchema = z
  .object({
    executionId: z.uuid(),
    status: ExecutionStatusSchema,
    cancelRequestedAt: z.string(),
    cancellation: CancellationSchema.meta({
      description: "The request as recorded: the first one's, when the run was already being cancelled.",
    }),
  })
  .meta({ id: "CancelAccepted" });

export const PauseAcceptedSchema = z
  .object({
    executionId: z.uuid(),
    status: ExecutionStatusSchema.meta({ description: "Its status when the request was recorded." }),
    pause: PauseSchema.meta({
      description: "The pause as recorded: the first one's, when the run was already paused.",
    }),
  })
  .meta({ id: "PauseAccepted" });

export const UnpauseAcceptedSchema = z
  .object({
    executionId: z.uuid(),
    status: ExecutionStatusSchema,
    pause: PauseSchema.meta({ description: "The pause that was lifted." }),
  })
  .meta({ id: "UnpauseAccepted" });

export const ExecutionIdParams = z.object({ id: z.string().meta({ description: "Execution id (UUID)." }) });
export const WorkflowNameParams = z.object({ name: z.string().meta({ description: "Workflow name." }) });
export const SignalParams = z.object({
  id: z.string(),
  name: z
    .string()
    .min(1)
    .max(200)
    .meta({ description: "Signal name; names starting with `$` are reserved." }),
});

/**
 * What `status=` accepts: the five statuses, and `held` (suspended with a hold, as the metrics and
 * docs/console.md name it). `held` is a filter, never a status an execution reports.
 */
export const LIST_STATUSES = [...ExecutionStatusSchema.options, "held"] as const;

/** A stable error code as the engine and API write them: upper case, digits and underscores. */
const FAILURE_CODE_PATTERN = /^[A-Z][A-Z0-9_]{0,63}$/;

export const ListQuerySchema = z
  .object({
    workflow: pgText(200).optional(),
    status: z
      .string()
      .optional()
      .transform((v, ctx) => {
        if (v === undefined) return undefined;
        const statuses = v.split(",").map((s) => s.trim());
        for (const s of statuses) {
          if (!(LIST_STATUSES as readonly string[]).includes(s)) {
            ctx.addIssue({
              code: "custom",
              message: `must be one or more of ${LIST_STATUSES.join(", ")}, comma-separated (got ${JSON.stringify(s)})`,
            });
            return z.NEVER;
          }
        }
        return statuses as (typeof LIST_STATUSES)[number][];
      })
      .meta({
        description:
          "One status or several, comma-separated: `running`, `waiting`, `suspended`, `completed`, `failed`, " +
          "or `held` (suspended with a hold: non-determinism, a workflow version no runner has).",
      }),
    code: z
      .string()
      .optional()
      .refine((v) => v === undefined || FAILURE_CODE_PATTERN.test(v), {
        error: (issue) =>
          `must be a stable error code: 1–64 of A–Z, 0–9 and _, starting with a letter (got ${JSON.stringify(issue.input)})`,
      })
      .meta({
        description:
          "A stable error code: the failure's (`CANCELLED`, `RECOVERY_EXHAUSTED`, ...) or a held run's hold " +
          "(`NON_DETERMINISM`, `WORKFLOW_VERSION_UNAVAILABLE`). Combines with `status`: " +
          "`status=failed&code=CANCELLED` lists the cancelled runs.",
        example: ENGINE_ERRORS.CANCELLED,
      }),
    key: pgText().optional().meta({ description: "Keyed-serialization key." }),
    idempotencyKey: pgText(255).optional(),
    createdAfter: pgTimestamp.optional().meta({ description: "Inclusive lower bound of createdAt." }),
    createdBefore: pgTimestamp.optional().meta({ description: "Exclusive upper bound of createdAt." }),
    parentId: z.uuid().optional().meta({ description: "Only the child runs this execution started." }),
    includeChildren: z
      .enum(["true", "false"])
      .optional()
      .transform((v) => v === "true")
      .meta({
        description:
          "`true`: child runs too (runs a workflow started). Default `false`: only top-level runs, as people " +
          "started them; a run's children are listed with `parentId`.",
      }),
    limit: pageLimit,
    cursor: z.string().optional().meta({ description: "`nextCursor` of the previous page." }),
  })
  .strict();

/** `Idempotency-Key`: 1–255 printable ASCII characters. */
export const IdempotencyKeySchema = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, "must be 1–255 printable ASCII characters without spaces");
