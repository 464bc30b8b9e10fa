import { z } from "zod";
import { addressTextSchema } from "../../values/address.js";

const HEX = /^0x([0-9a-fA-F]{2})*$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;
/** A decimal integer string (the API's wei grammar): no sign, no leading zeros, no exponent. */
const INTEGER_TEXT = /^(0|[1-9][0-9]*)$/;
/** 2^256 − 1: the largest value an EVM `uint256` (a transaction's value) holds. */
const UINT256_MAX = 2n ** 256n - 1n;
/** 2^64 − 1: the largest gas limit a transaction can carry. */
const UINT64_MAX = 2n ** 64n - 1n;

/** A decimal integer string of at most `max`, refused at the API naming the bound. */
function boundedInteger(what: string, max: bigint, bound: string) {
  return z
    .string()
    .regex(INTEGER_TEXT, `must be a decimal integer string${what}`)
    .refine(
      (v) => !INTEGER_TEXT.test(v) || (v.length <= 80 && BigInt(v) <= max),
      `must be at most ${bound} (${max})`,
    );
}

/** Address text as the caller wrote it: the lifecycle's input is journalled verbatim. */
export const address = addressTextSchema();
export const txHash = z
  .string()
  .regex(HASH, "must be a 0x-prefixed 32-byte hash") as z.ZodType<`0x${string}`>;

/** The fields of one on-chain write, shared by every version of the lifecycle's input. */
const TransactionFields = z.object({
  chainId: z.number().int().positive(),
  /** A configured signer this organisation may use. */
  signerId: z.string().min(1),
  /** The callee; absent for a contract deployment, whose `data` is then the creation bytecode. */
  to: address.optional(),
  /** Calldata without attribution; the ERC-8021 suffix is appended by the lifecycle. */
  data: z.string().regex(HEX, "must be 0x-prefixed hex bytes").default("0x"),
  /** Native value in wei, a decimal integer string. */
  valueWei: boundedInteger(" of wei", UINT256_MAX, "2^256 − 1, a uint256").default("0"),
  /** Gas units; estimated by the node when absent. */
  gasLimit: boundedInteger("", UINT64_MAX, "2^64 − 1").optional(),
  /** ERC-8021 attribution codes (schema 0). */
  attribution: z.array(z.string()).min(1).default(["tenor"]),
  /** Wait for gas funding until this instant instead of failing with GAS_REQUIRED at once. */
  fundingDeadline: z.iso.datetime({ offset: true }).optional(),
  /**
   * Send as an ERC-4337 UserOperation from this smart account, through the chain's resolved
   * EntryPoint; the signer is the account's owner and also submits the bundle (`handleOps`).
   */
  account: address.optional(),
  /** Gas paid from this paymaster's EntryPoint deposit (the chain's resolved EntryPoint); needs `account`. */
  paymaster: address.optional(),
  /** After finality, also wait until the Ledger Index has the block (milestone 4, `indexed`). */
  readAfterWrite: z.boolean().default(false),
});

/**
 * What one on-chain write asks for: the lifecycle workflow's input (version 2). Value fields are
 * the API's decimal strings; the steps decode them into typed values (src/values) for the chain's
 * codecs. It names no organisation: signers are those of the execution's organisation, which the
 * platform sets from the caller's key. Unknown fields (an `orgId` among them) are refused, never
 * dropped.
 */
export const TransactionRequest = TransactionFields.strict();
export type TransactionRequest = z.infer<typeof TransactionRequest>;

/**
 * Version 1's input, kept for executions that started on it: it carried the organisation, which
 * the plan step refuses unless it is the execution's own.
 */
export const TransactionRequestV1 = TransactionFields.extend({ orgId: z.string().min(1) });
export type TransactionRequestV1 = z.infer<typeof TransactionRequestV1>;

/**
 * EIP-3860's limit on a creation transaction's init code, in bytes (twice EIP-170's 24576-byte
 * code limit): a node refuses a longer one, so the API refuses it before anything is signed.
 */
export const MAX_INITCODE_BYTES = 49_152;

/** Bytes of 0x-prefixed hex text. */
const byteLength = (hex: string) => (hex.length - 2) / 2;

/**
 * Why a deployment request (no `to`) cannot be sent, as the field and the rule, or undefined when
 * it can (or is not a deployment). The init code is `data` with the attribution suffix the lifecycle
 * appends, so the limit counts both; `suffixBytes` is that suffix's length.
 */
export function deploymentIssue(
  request: { to?: string | undefined; data: string; account?: string | undefined },
  suffixBytes: number,
): { field: "data" | "account"; message: string } | undefined {
  if (request.to !== undefined) return undefined;
  if (request.account !== undefined)
    return {
      field: "account",
      message: "a UserOperation needs `to`: a deployment is sent from the signer itself",
    };
  const bytes = byteLength(request.data);
  if (bytes === 0)
    return { field: "data", message: "must hold the creation bytecode when `to` is absent (a deployment)" };
  if (bytes + suffixBytes > MAX_INITCODE_BYTES)
    return {
      field: "data",
      message: `must be at most ${MAX_INITCODE_BYTES - suffixBytes} bytes for a deployment (EIP-3860's ${MAX_INITCODE_BYTES}-byte init code limit, less the ${suffixBytes}-byte attribution suffix; got ${bytes})`,
    };
  return undefined;
}

/** The two settled end states recorded as a result; `rejected` and `expired` end as failures. */
export const TransactionVerdict = z.enum(["confirmed", "reverted"]);

export const TransactionResult = z.object({
  verdict: TransactionVerdict,
  hash: txHash,
  from: address,
  /** The nonce Tenor reserved; null for custody signers, whose provider owns nonces. */
  nonce: z.number().int().nullable(),
  blockNumber: z.string(),
  blockHash: txHash,
  /** Signed payloads broadcast for this intent (1 + replacements). */
  attempts: z.number().int().positive(),
  /** For a deployment (no `to`) that confirmed: the created contract's address, from the receipt. */
  contractAddress: address.optional(),
  /** For a UserOperation: its hash and what the EntryPoint charged (`hash` is the bundle's transaction). */
  userOperation: z
    .object({
      hash: txHash,
      sender: address,
      /** The zero address when the account paid its own gas. */
      paymaster: address,
      actualGasCostWei: z.string(),
      actualGasUsed: z.string(),
    })
    .optional(),
});
export type TransactionResult = z.infer<typeof TransactionResult>;

/** What the confirmation watcher signals when one of the hashes has a receipt. */
export const InclusionSignal = z.object({
  hash: txHash,
  blockNumber: z.string(),
  blockHash: txHash,
});

/** What the watcher signals once the included receipt is final, or gone in a reorg. */
export const FinalitySignal = z.discriminatedUnion("outcome", [
  z.object({ outcome: z.literal("final"), status: z.enum(["success", "reverted"]) }),
  z.object({ outcome: z.literal("reorged") }),
]);

export const FundedSignal = z.object({ balanceWei: z.string() });

/** The four recorded end states of a write (docs/chains.md, "The lifecycle"). */
export const END_STATES = ["confirmed", "reverted", "rejected", "expired"] as const;
