import { z } from "zod";
import {
  chainIdParameter,
  noOtherParameters,
  pageCursor,
  pageLimit,
  queryEnum,
  queryPattern,
} from "../../../src/api/query-params.js";
import { TEMPLATE_ID_PATTERN } from "../../../src/config/asset-templates-schema.js";
import { MintHolders } from "../mint-holders.js";

/**
 * Schemas of the assets module (docs/assets.md, "Reading assets"): the handlers parse with them
 * and the OpenAPI document is generated from them (flows/assets/api/routes.ts).
 */

export const ASSET_STATUSES = ["paused", "active"] as const;

/** One asset of the key's organisation, as `GET /v1/assets/{id}` and each list item show it. */
export const AssetSchema = z
  .object({
    id: z.string().meta({ description: "Asset id (UUID)." }),
    templateId: z.string().meta({ description: "The asset template it was created from." }),
    symbol: z.string(),
    name: z.string(),
    kind: z.enum(["bond", "fund"]),
    chainId: z.number().int(),
    status: z.enum(ASSET_STATUSES).meta({
      description: "`paused` until the creation's staleness bound lands (it cannot mint), then `active`.",
    }),
    token: z.string().nullable().meta({ description: "AssetToken address, once deployed." }),
    feed: z.string().nullable().meta({ description: "PriceFeed address, once created." }),
    resolver: z.string().meta({ description: "The template's PriceResolver." }),
    hashes: z
      .array(z.object({ step: z.string(), hash: z.string() }))
      .meta({ description: "The creation's transactions so far, in order (a partial list while paused)." }),
    executionId: z.string().meta({ description: "The creation execution that owns the asset." }),
    createdAt: z.string(),
    activatedAt: z.string().nullable(),
    links: z.object({ self: z.string(), execution: z.string() }),
  })
  .meta({ id: "Asset" });

export const AssetListSchema = z
  .object({
    items: z.array(AssetSchema),
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: "Pass as `cursor` for the next page; null on the last." }),
  })
  .meta({ id: "AssetList" });

export const AssetIdParams = z.object({ id: z.string().meta({ description: "Asset id (UUID)." }) });

const ListParameters = {
  status: queryEnum(ASSET_STATUSES)
    .optional()
    .meta({ description: "`paused` or `active`.", type: "string", enum: [...ASSET_STATUSES] }),
  // The column is a PostgreSQL integer; a chain no longer configured still lists its assets.
  chainId: chainIdParameter.optional(),
  template: queryPattern(TEMPLATE_ID_PATTERN, "must match [a-z0-9-]{1,64}")
    .optional()
    .meta({ description: "Asset template id.", type: "string", pattern: TEMPLATE_ID_PATTERN.source }),
  limit: pageLimit,
  cursor: pageCursor,
};

/** `GET /v1/assets`: filters combine with AND; the organisation is the key's, never a parameter. */
export const AssetListQuery = z
  .object(ListParameters)
  .catchall(noOtherParameters(Object.keys(ListParameters)))
  .meta({ id: "AssetListQuery" });

/** `POST /v1/assets/{id}/mints`: who receives how much; the asset is the path's, the organisation the key's. */
export const AssetMintBody = z
  .object({
    holders: MintHolders.meta({
      description:
        "1–200 holders, each address once, each amount in whole tokens at most the token's decimals.",
    }),
  })
  .strict()
  .meta({ id: "AssetMintRequest" });
