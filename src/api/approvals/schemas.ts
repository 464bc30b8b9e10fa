import { z } from "zod";

/** Schemas of the approvals module (handlers and OpenAPI both use them). */

export const ApprovalParams = z.object({
  id: z.string().meta({ description: "Execution id (UUID)." }),
  name: z.string().min(1).max(200).meta({ description: "The approval's name in the workflow." }),
});

export const VoteBodySchema = z
  .object({
    decision: z.enum(["approve", "reject"]),
    paramsHash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, "must be the 64-character hex SHA-256 shown as details.paramsHash of the wait")
      .meta({ description: "The `paramsHash` of the parameters the approver saw." }),
    reason: z.string().max(2000).optional(),
  })
  .strict()
  .meta({ id: "ApprovalVote" });

export const ApproverSchema = z
  .object({
    keyId: z.uuid(),
    name: z.string(),
    role: z.string(),
    subject: z
      .string()
      .meta({ description: "The person or system the key was issued to; counted once per quorum." }),
    at: z.string(),
  })
  .meta({ id: "Approver" });

export const VoteResultSchema = z
  .object({
    executionId: z.uuid(),
    approval: z.string(),
    position: z.number().int(),
    decision: z.enum(["approve", "reject"]),
    approvals: z.number().int().meta({ description: "Approving votes on these parameters so far." }),
    quorum: z.number().int(),
    outcome: z
      .enum(["pending", "approved", "rejected"])
      .meta({ description: "`approved` once the quorum is reached; `rejected` on the first rejection." }),
  })
  .meta({ id: "ApprovalVoteResult" });

export const ApprovalListSchema = z
  .object({
    executionId: z.uuid(),
    pending: z.array(
      z.object({
        name: z.string(),
        position: z.number().int(),
        params: z.record(z.string(), z.unknown()),
        paramsHash: z.string(),
        quorum: z.number().int(),
        until: z.string().nullable(),
      }),
    ),
    votes: z.array(
      z.object({
        name: z.string(),
        position: z.number().int(),
        approver: ApproverSchema,
        decision: z.enum(["approve", "reject"]),
        paramsHash: z.string(),
        reason: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: "ApprovalList" });
