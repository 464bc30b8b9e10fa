import { z } from "zod";
import { CancelActorSchema, ExecutionStatusSchema } from "./schemas.js";

/**
 * Schemas of an execution's activity resource (`GET /v1/executions/{id}/activity`, docs/console.md,
 * "A run seen whole"): what the status resource leaves out to stay light.
 */

export const PayloadSchema = z
  .object({
    bytes: z.number().int().meta({ description: "Bytes of its JSON text." }),
    sha256: z.string().meta({ description: "Hex SHA-256 of its canonical JSON (keys sorted)." }),
    value: z
      .unknown()
      .optional()
      .meta({ description: "The payload itself: only for roles that may read payloads (operator, admin)." }),
  })
  .meta({ id: "Payload" });

export const RunLinkSchema = z
  .object({ id: z.uuid(), workflow: z.string(), status: ExecutionStatusSchema, createdAt: z.string() })
  .meta({ id: "RunLink" });

export const DeliveredSignalSchema = z
  .object({
    kind: z.enum(["signal", "approval"]).meta({
      description: "`approval`: the decision an approval's votes reached (its votes name who decided).",
    }),
    name: z.string(),
    sentBy: CancelActorSchema.nullable().meta({
      description:
        "The key that delivered it, as it was then; null for an approval decision or when not recorded.",
    }),
    at: z.string(),
    consumedPosition: z.number().int().nullable().meta({ description: "The journal position that took it." }),
    consumedAt: z.string().nullable(),
    payload: PayloadSchema,
  })
  .meta({ id: "DeliveredSignal" });

export const ActivityVoteSchema = z
  .object({
    approval: z.string(),
    position: z.number().int(),
    decision: z.enum(["approve", "reject"]),
    approver: z.object({ keyId: z.string(), name: z.string(), role: z.string(), subject: z.string() }),
    at: z.string(),
    paramsHash: z.string(),
    reason: z.string().nullable(),
  })
  .meta({ id: "ActivityVote" });

export const ActivityAuditSchema = z
  .object({
    at: z.string(),
    action: z.string(),
    subject: z.string(),
    role: z.string(),
    actorKeyId: z.string().nullable(),
    target: z.string(),
    outcome: z.string(),
  })
  .meta({ id: "ActivityAuditEntry" });

export const ActivitySchema = z
  .object({
    executionId: z.uuid(),
    payloadsIncluded: z
      .boolean()
      .meta({ description: "Whether `value` is set on input, output and signals." }),
    input: PayloadSchema,
    output: PayloadSchema.nullable().meta({ description: "Once completed; else null." }),
    parent: RunLinkSchema.nullable(),
    children: z.object({
      items: z.array(RunLinkSchema).meta({ description: "The first page, oldest first." }),
      more: z.string().nullable().meta({
        description:
          "When there are more: the list of every child (`/v1/executions?parentId=...`, cursor-paged).",
      }),
    }),
    signals: z
      .array(DeliveredSignalSchema)
      .meta({ description: "Every signal delivered, in arrival order." }),
    votes: z.array(ActivityVoteSchema),
    auditIncluded: z
      .boolean()
      .meta({ description: "Whether the caller may read the audit trail (operator, admin)." }),
    audit: z
      .array(ActivityAuditSchema)
      .meta({ description: "The audit entries naming this run, oldest first." }),
  })
  .meta({ id: "ExecutionActivity" });
