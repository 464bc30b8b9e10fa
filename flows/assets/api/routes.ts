import type { Request, Response } from "express";
import type { z } from "zod";
import { API_ERRORS } from "../../../src/api/api-error-codes.js";
import { principalOf } from "../../../src/api/auth/authenticate.js";
import { executionPath } from "../../../src/api/executions/resource.js";
import { parseRequest } from "../../../src/api/http.js";
import { pageAfter, pageOf } from "../../../src/api/list-cursor.js";
import { problem, rolesNote } from "../../../src/api/openapi/common.js";
import { UUID_PATTERN } from "../../../src/api/query-params.js";
import { defineRoute, type RouteDeclaration } from "../../../src/api/route.js";
import { TenorError } from "../../../src/errors/tenor-error.js";
import type { AssetRecord } from "../asset-record.js";
import type { PgAssets } from "../store/pg-assets.js";
import { AssetIdParams, AssetListQuery, AssetListSchema, AssetSchema } from "./schemas.js";

/** What the routes read of the assets read model. */
type AssetReads = Pick<PgAssets, "get" | "list">;

/** The stores the assets routes read. */
export interface AssetRouteStores {
  assets: AssetReads;
}

/** Path of an asset's resource. */
export function assetPath(id: string): string {
  return `/v1/assets/${id}`;
}

/** The resource of a row: what both routes answer, without the organisation (it is the key's). */
export function toAssetResource(row: AssetRecord): z.infer<typeof AssetSchema> {
  return {
    id: row.id,
    templateId: row.templateId,
    symbol: row.symbol,
    name: row.name,
    kind: row.kind,
    chainId: row.chainId,
    status: row.status,
    token: row.token,
    feed: row.feed,
    resolver: row.resolver,
    hashes: row.hashes,
    executionId: row.executionId,
    createdAt: row.createdAt,
    activatedAt: row.activatedAt,
    links: { self: assetPath(row.id), execution: executionPath(row.executionId) },
  };
}

/** `GET /v1/assets/{id}`: another organisation's asset is reported exactly like a missing one. */
function getAsset(assets: AssetReads) {
  return async (req: Request, res: Response): Promise<void> => {
    const { id } = parseRequest(AssetIdParams, req.params, "path");
    const row = UUID_PATTERN.test(id) ? await assets.get(principalOf(res).orgId, id) : undefined;
    if (!row) {
      throw new TenorError(API_ERRORS.ASSET_NOT_FOUND, `asset ${id} was not found`, {
        details: { assetId: id },
      });
    }
    res.json(toAssetResource(row));
  };
}

/** `GET /v1/assets`: the organisation's assets, newest first, filtered, cursor-paged. */
function listAssets(assets: AssetReads) {
  return async (req: Request, res: Response): Promise<void> => {
    const query = parseRequest(AssetListQuery, req.query, "query");
    const after = pageAfter(query.cursor);
    const rows = await assets.list({
      orgId: principalOf(res).orgId,
      ...(query.status !== undefined ? { status: query.status } : {}),
      ...(query.chainId !== undefined ? { chainId: query.chainId } : {}),
      ...(query.template !== undefined ? { templateId: query.template } : {}),
      ...(after !== undefined ? { after } : {}),
      limit: query.limit + 1,
    });
    const { page, nextCursor } = pageOf(rows, query.limit);
    const body: z.infer<typeof AssetListSchema> = { items: page.map(toAssetResource), nextCursor };
    res.json(body);
  };
}

/** The OpenAPI tag of the assets paths. */
export const ASSETS_TAG = { name: "assets", description: "The organisation's assets (docs/assets.md)." };

const json = <T extends z.ZodType>(schema: T) => ({ "application/json": { schema } });

/** The assets module: the key's organisation's assets, a page or one (docs/assets.md). */
export const ASSET_ROUTES: readonly RouteDeclaration<AssetRouteStores>[] = [
  defineRoute<AssetRouteStores>({
    method: "get",
    path: "/v1/assets",
    permission: "read",
    openapi: {
      operationId: "listAssets",
      tags: ["assets"],
      summary: "List the organisation's assets, newest first",
      description:
        "The key's organisation's assets (never another's), newest first. Filters combine with AND; pages " +
        `follow \`nextCursor\`. Each item is the resource \`GET /v1/assets/{id}\` answers. ${rolesNote("read")}`,
      request: { query: AssetListQuery },
      responses: {
        200: { description: "One page.", content: json(AssetListSchema) },
        400: problem("REQUEST_INVALID (field `errors`, each naming the parameter, the value and the rule)."),
      },
    },
    handler: ({ assets }) => listAssets(assets),
  }),
  defineRoute<AssetRouteStores>({
    method: "get",
    path: "/v1/assets/{id}",
    permission: "read",
    openapi: {
      operationId: "getAsset",
      tags: ["assets"],
      summary: "One asset of the organisation",
      description: `Its template, chain, status, contracts, the creation's hashes and owning execution. ${rolesNote("read")}`,
      request: { params: AssetIdParams },
      responses: {
        200: { description: "The asset.", content: json(AssetSchema) },
        404: problem("ASSET_NOT_FOUND (also for another organisation's asset)."),
      },
    },
    handler: ({ assets }) => getAsset(assets),
  }),
];
