import { z } from "zod";
import { chainAddressSchema } from "../values/address.js";

/**
 * The `chains` and `signers` keys (docs/chains.md): every chain Tenor writes to, and the signers
 * that sign for it. Rules name themselves in their messages because ConfigError reports
 * `key = value: rule`.
 */

const WEI_INTEGER = /^(0|[1-9][0-9]*)$/;

const intRange = (min: number, max: number) =>
  z.coerce.number().int("must be an integer").min(min, `${min} ≤ v ≤ ${max}`).max(max, `${min} ≤ v ≤ ${max}`);

const rpcUrl = z
  .string()
  .refine((v) => /^(https?|wss?):\/\/[^\s]+$/.test(v), "must be an http(s):// or ws(s):// URL");

/** How a transaction counts as final: `depth` blocks on top of its block, or the node's `finalized` tag. */
export const finalitySchema = z.union(
  [z.object({ depth: intRange(0, 10_000) }).strict(), z.literal("finalized")],
  { error: 'must be { depth: n } (0 ≤ n ≤ 10000) or "finalized"' },
);

export const chainSchema = z
  .object({
    /** EIP-155 chain id. */
    id: z.coerce.number().int("must be an integer").min(1, "must be ≥ 1"),
    name: z
      .string()
      .min(1, "is required")
      .regex(/^[a-z0-9-]+$/, "must match [a-z0-9-]+"),
    /** Tried in order; the first is the primary. */
    rpcUrls: z.array(rpcUrl, "must be a list of URLs").min(1, "must name at least one URL"),
    finality: finalitySchema.default({ depth: 1 }),
    /**
     * One JSON-RPC call's deadline in ms (default 10000); a call that times out is tried once more,
     * then fails as a transient error (a broadcast step retries it, asking the node for the hash first).
     */
    rpcTimeoutMs: intRange(100, 120_000).default(10_000),
    /** The chain's watcher period in ms; default `durable.confirmationWatcher.intervalMs`. */
    confirmationWatcher: z
      .object({ intervalMs: intRange(50, 60_000).optional() })
      .strict()
      .default({}),
    /**
     * Most unconfirmed (reserved, not yet mined) transactions of one sender on this chain; a write
     * over it waits, kind `nonce`, until the chain mines one (docs/chains.md, "Pending
     * transactions per sender"). 1 ≤ v ≤ 1024, default 16.
     */
    maxPendingPerSender: intRange(1, 1024).default(16),
    /** The EntryPoint as configured: the contract itself or a reference contract pointing to it. */
    entryPoint: chainAddressSchema().optional(),
    fees: z
      .object({
        /** Replacement fee increase, percent of both EIP-1559 fields; nodes refuse less than 12.5. */
        bumpPercent: z.coerce
          .number()
          .min(12.5, "12.5 ≤ v ≤ 200 (nodes refuse a replacement below +12.5 %)")
          .max(200, "12.5 ≤ v ≤ 200 (nodes refuse a replacement below +12.5 %)")
          .default(12.5),
        /** Replacements at most this often per transaction; then it is surfaced to an operator. */
        maxBumps: intRange(0, 20).default(3),
        /** No replacement raises maxFeePerGas above this, in wei per gas (decimal integer string). */
        maxFeePerGasWei: z.string().regex(WEI_INTEGER, "must be a decimal integer string of wei").optional(),
        /** A broadcast not included after this long is replaced, in ms. */
        stuckAfterMs: intRange(100, 3_600_000).default(30_000),
      })
      .strict()
      .default({ bumpPercent: 12.5, maxBumps: 3, stuckAfterMs: 30_000 }),
  })
  .strict();

/** A secret's source: an environment variable or a file (e.g. a mounted Kubernetes secret). */
export const secretSourceSchema = z.union(
  [
    z.object({ env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/) }).strict(),
    z.object({ file: z.string().min(1) }).strict(),
  ],
  { error: "must be { env: NAME } or { file: /path }" },
);

const signerBase = {
  id: z.string().regex(/^[a-z0-9-]+$/, "must match [a-z0-9-]+"),
  /** Organisation allowed to use this signer; unset: the platform's own signer. */
  orgId: z.string().min(1).optional(),
};

export const signerSchema = z.discriminatedUnion(
  "kind",
  [
    z.object({ ...signerBase, kind: z.literal("local"), privateKey: secretSourceSchema }).strict(),
    z
      .object({
        ...signerBase,
        kind: z.literal("custody"),
        /** The address the provider signs for; Tenor never allocates its nonces. */
        address: chainAddressSchema(),
        baseUrl: z.string().refine((v) => /^https?:\/\/[^\s]+$/.test(v), "must be an http(s):// URL"),
        apiKey: secretSourceSchema,
        /** One provider call's deadline, in ms. */
        requestTimeoutMs: intRange(100, 120_000).default(10_000),
        /** Status polls of one intent before it counts as lost. */
        pollBudget: intRange(1, 10_000).default(60),
        pollIntervalMs: intRange(50, 600_000).default(2_000),
      })
      .strict(),
  ],
  { error: 'kind must be "local" or "custody"' },
);

export const chainsSchema = z
  .array(chainSchema, "must be a list of chains")
  // A prefault (an input parsed like any other) rather than a default: the chains hold address
  // codecs, and the values schema, generated from the input side, shows only input defaults.
  .prefault([])
  .superRefine((chains, ctx) => {
    const seen = new Set<number>();
    chains.forEach((chain, index) => {
      if (seen.has(chain.id))
        ctx.addIssue({
          code: "custom",
          path: [index, "id"],
          input: chain.id,
          message: "must be unique among chains",
        });
      seen.add(chain.id);
    });
  });

export const signersSchema = z
  .array(signerSchema, "must be a list of signers")
  .prefault([])
  .superRefine((signers, ctx) => {
    const seen = new Set<string>();
    signers.forEach((signer, index) => {
      if (seen.has(signer.id))
        ctx.addIssue({
          code: "custom",
          path: [index, "id"],
          input: signer.id,
          message: "must be unique among signers",
        });
      seen.add(signer.id);
    });
  });

export type ChainConfig = z.infer<typeof chainSchema>;
export type SignerConfig = z.infer<typeof signerSchema>;
export type SecretSource = z.infer<typeof secretSourceSchema>;
