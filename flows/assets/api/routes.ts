import type { Request, Response } from "express";
import type { z } from "zod";
import { API_ERRORS } from "../../../src/api/api-error-codes.js";
import { principalOf } from "../../../src/api/auth/authenticate.js";
import { executionPath } from "../../../src/api/executions/resource.js";
import { ExecutionSchema } from "../../../src/api/executions/schemas.js";
import {
  type ExecutionStarting,
  idempotencyKeyOf,
  startAndAnswer,
} from "../../../src/api/executions/start-answer.js";
import { parseRequest } from "../../../src/api/http.js";
import { pageAfter, pageOf } from "../../../src/api/list-cursor.js";
import { problem, rolesNote } from "../../../src/api/openapi/common.js";
import { apiError } from "../../../src/api/problem.js";
import { UUID_PATTERN } from "../../../src/api/query-params.js";
import { defineRoute, type RouteDeclaration } from "../../../src/api/route.js";
import { TenorError } from "../../../src/errors/tenor-error.js";
import type { AssetRecord } from "../asset-record.js";
import { mintUnits } from "../mint-holders.js";
import type { AssetTemplates } from "../ports.js";
import { MINT_ASSET_WORKFLOW } from "../schemas.js";
import type { PgAssets } from "../store/pg-assets.js";
import { AssetIdParams, AssetListQuery, AssetListSchema, AssetMintBody, AssetSchema } from "./schemas.js";

/** What the routes read of the assets read model. */
type AssetReads = Pick<PgAssets, "get" | "list">;

/** What the assets routes read, and what the mint route starts executions with. */
export interface AssetRouteStores {
  assets: AssetReads;
  /** The configured asset templates: a mint's amounts are checked against the token's decimals. */
  templates: AssetTemplates;
  executions: ExecutionStarting;
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

/** The key's organisation's asset `id`; another organisation's is reported exactly like a missing one. */
async function ownAsset(assets: AssetReads, res: Response, id: string): Promise<AssetRecord> {
  const row = UUID_PATTERN.test(id) ? await assets.get(principalOf(res).orgId, id) : undefined;
  if (!row) {
    throw new TenorError(API_ERRORS.ASSET_NOT_FOUND, `asset ${id} was not found`, {
      details: { assetId: id },
    });
  }
  return row;
}

/** `GET /v1/assets/{id}`. */
function getAsset(assets: AssetReads) {
  return async (req: Request, res: Response): Promise<void> => {
    const { id } = parseRequest(AssetIdParams, req.params, "path");
    res.json(toAssetResource(await ownAsset(assets, res, id)));
  };
}

/**
 * `POST /v1/assets/{id}/mints`: starts `asset.mint` for an active asset of the key's organisation,
 * once its holders pass every rule the workflow holds them to. An Idempotency-Key is required: a
 * client that retries a mint whose answer it lost must get the same execution, never a second mint.
 */
function mintToHolders({ assets, templates, executions }: AssetRouteStores) {
  return async (req: Request, res: Response): Promise<void> => {
    const { id } = parseRequest(AssetIdParams, req.params, "path");
    const body = parseRequest(AssetMintBody, req.body ?? {}, "body");
    const idempotencyKey = idempotencyKeyOf(req.headers);
    if (idempotencyKey === undefined) {
      const message = "is required for a mint: a retried request must answer the same mint, never mint again";
      throw apiError(
        API_ERRORS.REQUEST_INVALID,
        `the request is invalid: header.idempotency-key: ${message}`,
        {
          errors: [{ pointer: "header.idempotency-key", message }],
        },
      );
    }
    const asset = await ownAsset(assets, res, id);
    if (asset.status !== "active") {
      throw apiError(
        API_ERRORS.ASSET_NOT_ACTIVE,
        `asset ${id} is ${asset.status}: its token mints once its creation's staleness bound lands`,
        { assetId: id, status: asset.status, executionId: asset.executionId },
      );
    }
    // A template since removed is the workflow's refusal (ASSET_NOT_MINTABLE), recorded on the run.
    const template = templates.get(asset.templateId);
    if (template && template.orgId === asset.orgId) {
      const errors = mintUnits(body.holders, template.tokenDecimals).issues.map((issue) => ({
        pointer: `body.${issue.path}`,
        message: issue.message,
      }));
      if (errors.length > 0) {
        throw apiError(
          API_ERRORS.REQUEST_INVALID,
          `the request is invalid: ${errors.map((e) => `${e.pointer}: ${e.message}`).join("; ")}`,
          { errors },
        );
      }
    }
    await startAndAnswer(executions, res, {
      workflow: MINT_ASSET_WORKFLOW,
      input: { assetId: id, holders: body.holders },
      idempotencyKey,
    });
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

/** The assets module: the key's organisation's assets, a page or one, and minting them (docs/assets.md). */
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
  defineRoute<AssetRouteStores>({
    method: "post",
    path: "/v1/assets/{id}/mints",
    permission: "mint",
    audit: { action: "asset.mint", target: (req) => `asset:${req.params.id}` },
    jsonBody: true,
    openapi: {
      operationId: "mintAsset",
      tags: ["assets"],
      summary: "Mint an active asset of the organisation to holders",
      description:
        "Starts `asset.mint`: one `mintBatch` transaction from the template's signer (the token's owner) credits " +
        "every holder; its execution shows the milestones and, once done, the hash. Amounts are whole tokens as " +
        "decimal strings, at most the token's decimals. `Idempotency-Key` is required: the same key and body " +
        "answer the same execution and mint nothing more (another body: 422 IDEMPOTENCY_KEY_REUSED). Audited " +
        `(\`asset.mint\`, target \`asset:<id>\`), refusals included. ${rolesNote("mint")}`,
      request: {
        params: AssetIdParams,
        body: { required: true, content: json(AssetMintBody) },
      },
      responses: {
        202: { description: "The mint's execution.", content: json(ExecutionSchema) },
        400: problem(
          "MALFORMED_JSON or REQUEST_INVALID (field `errors`: an address, an amount that is not positive or has " +
            "more decimals than the token, a holder named twice, more than 200 holders, no Idempotency-Key).",
        ),
        404: problem("ASSET_NOT_FOUND (also for another organisation's asset)."),
        409: problem("ASSET_NOT_ACTIVE: the asset is still paused; its token cannot mint yet."),
        415: problem("UNSUPPORTED_MEDIA_TYPE."),
        422: problem("IDEMPOTENCY_KEY_REUSED."),
      },
    },
    handler: mintToHolders,
  }),
];
