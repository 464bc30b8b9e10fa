import type { Request, Response } from "express";
import type { z } from "zod";
import { LEDGER_INDEX_ERRORS } from "../../errors/ledger-index-errors.js";
import { TenorError } from "../../errors/tenor-error.js";
import { addressText } from "../../values/address.js";
import type { ApiDeps } from "../api-deps.js";
import { principalOf } from "../auth/authenticate.js";
import { parseRequest } from "../http.js";
import {
  AssetParams,
  type AssetStatusResource,
  ContractParams,
  type PriceFeedResource,
  type SystemSettingsResource,
} from "./schemas.js";
import { trackedContract, trackingOf } from "./tracked-contract.js";

/**
 * Ledger Index reads of price feeds, asset status and system settings (docs/ledger-index.md,
 * "Read model and reads"), for contracts the key's organisation tracks; a removed contract
 * answers as of its removal height.
 */
export function ledgerDomainRoutes(deps: ApiDeps) {
  const { ledgerScope: scope, ledgerDomainReads: reads, ledgerReads: heights } = deps;
  const indexed = async (chainId: number) => ((await heights.indexedHeight(chainId)) ?? 0n).toString();

  /** `GET /v1/chains/{chainId}/price-feeds/{address}`. */
  const priceFeed = async (req: Request, res: Response): Promise<void> => {
    const { chainId, address } = parseRequest(ContractParams, req.params, "path");
    const row = await trackedContract(scope, {
      chainId,
      orgId: principalOf(res).orgId,
      address,
      kind: "price-feed",
    });
    const feed = await reads.priceFeed(chainId, address, row.removedHeight);
    if (!feed)
      throw new TenorError(
        LEDGER_INDEX_ERRORS.LEDGER_NOT_INDEXED,
        `price feed ${addressText(address)} on chain ${chainId}: its FeedCreated log is not indexed yet`,
        { retryable: true, details: { chainId, address: addressText(address) } },
      );
    const body: z.infer<typeof PriceFeedResource> = {
      chainId,
      ...feed,
      asOfBlock: row.removedHeight?.toString() ?? (await indexed(chainId)),
      tracking: trackingOf(row),
    };
    res.json(body);
  };

  /** `GET /v1/chains/{chainId}/assets/{asset}/status`. */
  const assetStatus = async (req: Request, res: Response): Promise<void> => {
    const { chainId, asset } = parseRequest(AssetParams, req.params, "path");
    const status = await reads.assetStatus(chainId, principalOf(res).orgId, asset);
    if (!status)
      throw new TenorError(
        LEDGER_INDEX_ERRORS.LEDGER_SCOPE_NOT_FOUND,
        `asset ${addressText(asset)} is named by none of this organisation's tracked price feeds or resolvers on chain ${chainId}`,
        { details: { chainId, asset: addressText(asset) } },
      );
    const body: z.infer<typeof AssetStatusResource> = {
      chainId,
      ...status,
      asOfBlock: await indexed(chainId),
    };
    res.json(body);
  };

  /** `GET /v1/chains/{chainId}/system-settings/{address}`. */
  const systemSettings = async (req: Request, res: Response): Promise<void> => {
    const { chainId, address } = parseRequest(ContractParams, req.params, "path");
    const row = await trackedContract(scope, {
      chainId,
      orgId: principalOf(res).orgId,
      address,
      kind: "system-settings",
    });
    const body: z.infer<typeof SystemSettingsResource> = {
      chainId,
      contract: addressText(address),
      settings: await reads.settings(chainId, address, row.removedHeight),
      asOfBlock: row.removedHeight?.toString() ?? (await indexed(chainId)),
      tracking: trackingOf(row),
    };
    res.json(body);
  };

  return { priceFeed, assetStatus, systemSettings };
}
