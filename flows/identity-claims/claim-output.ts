import { z } from "zod";

/** What `identity.claim-batch` returns: every claim's outcome and every write it sent. */

const hex = z.string().regex(/^0x[0-9a-fA-F]*$/);

export const ClaimOutcome = z.object({
  /** Position in the input's `claims`. */
  index: z.number().int(),
  subject: hex,
  topic: z.string(),
  dataHash: hex,
  /**
   * `written`: this batch's transaction added it (its receipt has the ClaimAdded). `already-present`:
   * the registry held a claim for (subject, topic) before, or another writer's landed first.
   */
  outcome: z.enum(["written", "already-present"]),
  /** The transaction that added it; null when already present. */
  transaction: hex.nullable(),
  /** The data hash the registry holds for (subject, topic). */
  onChainDataHash: hex.nullable(),
  /** False when an already-present claim holds other data than this batch asked for. */
  dataMatches: z.boolean(),
});
export type ClaimOutcome = z.infer<typeof ClaimOutcome>;

/** One batch of `batchSize` claims: how many it sent (the missing ones) and how many its receipt added. */
export const WriteSummary = z.object({
  batch: z.number().int(),
  /** Index of the batch's first claim. */
  from: z.number().int(),
  count: z.number().int(),
  sent: z.number().int(),
  written: z.number().int(),
  /** Null when every claim of the batch was already present (nothing sent). */
  transaction: hex.nullable(),
});
export type WriteSummary = z.infer<typeof WriteSummary>;

export const ClaimBatchOutput = z.object({
  chainId: z.number().int(),
  registry: hex,
  signerId: z.string(),
  signer: hex,
  count: z.number().int(),
  /** The hash the approvers approved (docs/identity-claims.md, "What approvers approve"). */
  claimsHash: hex,
  batchSize: z.number().int(),
  batches: z.number().int(),
  written: z.number().int(),
  alreadyPresent: z.number().int(),
  /** Names of the approving keys, in vote order. */
  approvedBy: z.array(z.string()),
  writes: z.array(WriteSummary),
  claims: z.array(ClaimOutcome),
});
export type ClaimBatchOutput = z.infer<typeof ClaimBatchOutput>;
