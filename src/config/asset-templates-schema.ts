import { z } from "zod";
import { addressTextSchema } from "../values/address.js";

/**
 * The `assetTemplates` key (docs/assets.md): what an organisation may create as a bond or a fund,
 * and the platform facts its creation must not take from a caller — the chain, the signer that owns
 * the contracts, the price resolver and the staleness bound it installs. Rules name themselves in
 * their messages because ConfigError reports `key = value: rule`.
 */

/** What a template id may be: also what `GET /v1/assets?template=` accepts. */
export const TEMPLATE_ID_PATTERN = /^[a-z0-9-]{1,64}$/;

const intRange = (min: number, max: number) =>
  z.coerce.number().int("must be an integer").min(min, `${min} ≤ v ≤ ${max}`).max(max, `${min} ≤ v ≤ ${max}`);

export const assetTemplateSchema = z
  .object({
    /** Named by the caller (`templateId` in the `asset.create` input). */
    id: z.string().regex(TEMPLATE_ID_PATTERN, "must match [a-z0-9-]{1,64}"),
    kind: z.enum(["bond", "fund"], { error: 'must be "bond" or "fund"' }),
    /** The only organisation that may create assets from this template. */
    orgId: z.string().min(1, "is required"),
    /** A configured chain. */
    chainId: z.coerce.number().int("must be an integer").min(1, "must be ≥ 1"),
    /** A configured signer of `orgId`: it deploys the token and the feed and owns both. */
    signerId: z.string().regex(/^[a-z0-9-]+$/, "must match [a-z0-9-]+"),
    /** The PriceResolver the feed's staleness bound is installed on (owned by `signerId`). */
    // Kept as written (the configuration reads back verbatim); asset creation builds the ChainAddress.
    resolver: addressTextSchema(),
    /** How old the feed's latest observation may be, in seconds. */
    stalenessSeconds: intRange(1, 31_536_000),
    /** Decimals of the token's amounts. Default 18. */
    tokenDecimals: intRange(0, 36).default(18),
    /** Decimals of the feed's prices. Default 8. */
    priceDecimals: intRange(0, 36).default(8),
  })
  .strict();

export const assetTemplatesSchema = z
  .array(assetTemplateSchema, "must be a list of asset templates")
  .default([])
  .superRefine((templates, ctx) => {
    const seen = new Set<string>();
    templates.forEach((template, index) => {
      if (seen.has(template.id))
        ctx.addIssue({
          code: "custom",
          path: [index, "id"],
          input: template.id,
          message: "must be unique among asset templates",
        });
      seen.add(template.id);
    });
  });

export type AssetTemplateConfig = z.infer<typeof assetTemplateSchema>;
