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

/** One vote cast: who (key and subject), what, on which parameters, when (`approver.at`). */
export const CastVoteSchema = z
  .object({
    name: z.string().meta({ description: "The approval's name." }),
    position: z.number().int(),
    approver: ApproverSchema,
    decision: z.enum(["approve", "reject"]),
    paramsHash: z.string(),
    reason: z.string().nullable(),
  })
  .meta({ id: "ApprovalVoteCast" });

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
    votes: z.array(CastVoteSchema).meta({
      description:
        "Every vote cast on this approval while it waits at this position, this one included, oldest first.",
    }),
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
    votes: z.array(CastVoteSchema).meta({ description: "Every vote cast on the execution, oldest first." }),
  })
  .meta({ id: "ApprovalList" });
