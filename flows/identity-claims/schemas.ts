import {
  type Address,
  encodeAbiParameters,
  getAddress,
  type Hex,
  isAddress,
  keccak256,
  stringToHex,
  zeroAddress,
} from "viem";
import { z } from "zod";
import { addressText, sameAddress } from "../../src/values/index.js";

/**
 * The input of `identity.claim-batch` and its normal form. The schema only checks (no transforms),
 * so the stored input is exactly what the caller sent; the workflow normalises it with the pure
 * functions below, the same way on every replay.
 */

/** Most claims in one batch execution: its result lists every claim. */
export const MAX_CLAIMS = 5_000;
/** Most claims in one transaction: about 50k gas each, so 200 stay far below a block's gas limit. */
export const MAX_WRITE_SIZE = 200;
/** Longest claim data, in characters: the chain keeps only its keccak-256. */
export const MAX_DATA_LENGTH = 4_096;

const UINT256_MAX = (1n << 256n) - 1n;

const address = (what: string) =>
  z.string().refine((value) => isAddress(value), {
    error: (issue) =>
      `${what} ${JSON.stringify(issue.input)} must be a 0x-prefixed 20-byte hex address (all lower case, or with a valid EIP-55 checksum)`,
  });

const topic = z.union([z.string(), z.number()]).superRefine((value, ctx) => {
  if (topicValue(value) === null) {
    ctx.addIssue({
      code: "custom",
      message: `topic ${JSON.stringify(value)} must be an integer from 0 to 2^256-1 (a decimal string, or a JSON number up to 2^53-1)`,
    });
  }
});

export const ClaimInput = z.object({
  /** The identity the claim is about. */
  subject: address("subject").refine((v) => !isAddress(v) || !sameAddress(v, zeroAddress), {
    message: "subject must not be the zero address",
  }),
  /** The claim's topic (a uint256; e.g. 1 = KYC, 2 = accreditation, by the registry's convention). */
  topic,
  /** The claim's data (a document reference, a JSON text, ...); the chain holds keccak256 of its UTF-8 bytes. */
  data: z
    .string()
    .min(1, "data must not be empty")
    .max(MAX_DATA_LENGTH, `data must be at most ${MAX_DATA_LENGTH} characters`),
});
export type ClaimInput = z.infer<typeof ClaimInput>;

export const ClaimBatchInput = z.object({
  chainId: z.number().int("chainId must be an integer").positive("chainId must be positive"),
  /** The ClaimRegistry to write; the signer must be its owner or one of its issuers. */
  registry: address("registry"),
  /** A signer of the calling organisation (not a platform signer). */
  signerId: z.string().min(1, "signerId must not be empty"),
  claims: z
    .array(ClaimInput)
    .min(1, "claims must hold at least one claim")
    .max(MAX_CLAIMS, `claims must hold at most ${MAX_CLAIMS} claims`)
    .superRefine(refuseRepeats),
  /** Claims per transaction. */
  batchSize: z
    .number()
    .int("batchSize must be an integer")
    .min(1, "batchSize must be at least 1")
    .max(MAX_WRITE_SIZE, `batchSize must be at most ${MAX_WRITE_SIZE}`)
    .default(50),
  /** Distinct approvers (people, not keys) who must approve before anything is written. */
  quorum: z
    .number()
    .int("quorum must be an integer")
    .min(1, "quorum must be at least 1")
    .max(10, "quorum must be at most 10")
    .default(2),
  /** How long the approval may take, e.g. "30s", "24h", "7d"; past it the batch fails APPROVAL_EXPIRED. */
  approvalTimeout: z
    .string()
    .regex(
      /^[1-9]\d*(s|m|h|d)$/,
      'approvalTimeout must be a positive whole number of s, m, h or d, e.g. "24h"',
    )
    .default("24h"),
});
export type ClaimBatchInput = z.infer<typeof ClaimBatchInput>;

/** One claim in its normal form: checksummed subject, decimal topic, the data's hash. */
export interface Claim {
  index: number;
  subject: Address;
  /** Decimal string of the uint256 topic. */
  topic: string;
  dataHash: Hex;
}

export function normaliseClaims(claims: readonly ClaimInput[]): Claim[] {
  return claims.map((claim, index) => ({
    index,
    subject: getAddress(claim.subject),
    topic: (topicValue(claim.topic) as bigint).toString(),
    dataHash: keccak256(stringToHex(claim.data)),
  }));
}

/**
 * What approvers approve: keccak256 of the ABI encoding of (subjects, topics, dataHashes) in
 * input order — the arguments `addClaims` receives, so anyone can recompute it with standard tools.
 */
export function claimsHash(claims: readonly Claim[]): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: "address[]" }, { type: "uint256[]" }, { type: "bytes32[]" }],
      [claims.map((c) => c.subject), claims.map((c) => BigInt(c.topic)), claims.map((c) => c.dataHash)],
    ),
  );
}

/** The claim's identity on chain: one claim per (subject, topic). */
export function claimKey(claim: { subject: string; topic: string | bigint }): string {
  return `${addressText(claim.subject)}/${claim.topic.toString()}`;
}

function topicValue(value: string | number): bigint | null {
  if (typeof value === "number") {
    return Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : null;
  }
  if (!/^(0|[1-9]\d{0,77})$/.test(value)) return null;
  const parsed = BigInt(value);
  return parsed <= UINT256_MAX ? parsed : null;
}

/** One claim per (subject, topic): a repeat inside the batch names both indexes. */
function refuseRepeats(claims: readonly ClaimInput[], ctx: z.RefinementCtx): void {
  const first = new Map<string, number>();
  claims.forEach((claim, index) => {
    const t = topicValue(claim.topic);
    if (!isAddress(claim.subject) || t === null) return; // reported on the field itself
    const key = claimKey({ subject: claim.subject, topic: t });
    const earlier = first.get(key);
    if (earlier === undefined) {
      first.set(key, index);
      return;
    }
    ctx.addIssue({
      code: "custom",
      path: [index],
      message: `claims[${index}] repeats claims[${earlier}] (subject ${claim.subject}, topic ${t}): one claim per subject and topic`,
    });
  });
}

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
