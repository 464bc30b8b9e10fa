import { z } from "zod";
import { MintHolders } from "./mint-holders.js";

/**
 * The input and output of `asset.create` (docs/assets.md). The input names a template and what the
 * issuer chooses; the chain, the signer, the resolver and the staleness bound are the template's and
 * cannot be supplied (`strict`: an unknown field such as `resolver` or `orgId` is refused).
 */
export const CreateAssetInput = z
  .object({
    /** An `assetTemplates` entry of the caller's organisation. */
    templateId: z.string().regex(/^[a-z0-9-]{1,64}$/, "must match [a-z0-9-]{1,64}"),
    /** The token's name. */
    name: z.string().min(1, "is required").max(64, "at most 64 characters"),
    /** The token's symbol; with the template, it names the asset within the organisation. */
    symbol: z.string().regex(/^[A-Z0-9]{2,11}$/, "must be 2–11 upper-case letters or digits"),
    /** The first price observation, a positive decimal string at most the template's price decimals. */
    initialPrice: z
      .string()
      .regex(/^(0|[1-9][0-9]*)(\.[0-9]+)?$/, "must be a decimal string such as 100.25")
      .refine((v) => /[1-9]/.test(v), "must be greater than 0"),
  })
  .strict();
export type CreateAssetInput = z.infer<typeof CreateAssetInput>;

export const AssetHash = z.object({ step: z.string(), hash: z.string() });

export const CreateAssetOutput = z.object({
  assetId: z.string(),
  status: z.literal("active"),
  token: z.string(),
  feed: z.string(),
  resolver: z.string(),
  /** Every transaction of the creation, in order (one per step that sent one). */
  hashes: z.array(AssetHash),
});
export type CreateAssetOutput = z.infer<typeof CreateAssetOutput>;

/**
 * The name of the mint workflow, apart from its definition: the route starts it by name, and a
 * process that imports the routes (the api) does not declare a workflow its runner must register.
 */
export const MINT_ASSET_WORKFLOW = "asset.mint";

/**
 * The input of `asset.mint` (docs/assets.md, "Minting"): the asset and its holders as the caller
 * wrote them. The organisation is the execution's (the API key's), never a field.
 */
export const MintAssetInput = z
  .object({
    assetId: z.uuid(),
    holders: MintHolders,
  })
  .strict();
export type MintAssetInput = z.infer<typeof MintAssetInput>;

export const MintAssetOutput = z.object({
  assetId: z.string(),
  token: z.string(),
  /** The `mintBatch` transaction. */
  hash: z.string(),
  blockNumber: z.string(),
  /** How many holders were credited. */
  holders: z.number().int(),
  /** The sum minted, in the token's base units (a decimal integer string). */
  totalUnits: z.string(),
});
export type MintAssetOutput = z.infer<typeof MintAssetOutput>;
