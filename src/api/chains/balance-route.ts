import type { Request, Response } from "express";
import type { z } from "zod";
import { addressText } from "../../values/address.js";
import type { ApiDeps } from "../api-deps.js";
import { principalOf } from "../auth/authenticate.js";
import { parseRequest } from "../http.js";
import { TokenBalanceParams, type TokenBalanceResource } from "./schemas.js";
import { trackedContract, trackingOf } from "./tracked-contract.js";

/**
 * `GET /v1/chains/{chainId}/tokens/{address}/balances/{holder}`: a holder's ERC-20 balance and the
 * token's total supply from the Ledger Index (docs/ledger-index.md), for a token the caller's
 * organisation tracks (from the key; another organisation's tracking is invisible). A token the
 * organisation stopped tracking answers as of its removal height.
 */
export function readTokenBalance(deps: ApiDeps) {
  const { ledgerScope: scope, ledgerReads: reads } = deps;
  return async (req: Request, res: Response): Promise<void> => {
    const principal = principalOf(res);
    const { chainId, address, holder } = parseRequest(TokenBalanceParams, req.params, "path");
    const tracked = await trackedContract(scope, { chainId, orgId: principal.orgId, address, kind: "erc20" });
    const read = await reads.erc20Balance(chainId, address, holder, tracked.removedHeight);
    const body: z.infer<typeof TokenBalanceResource> = {
      chainId,
      token: addressText(address),
      holder: addressText(holder),
      ...read,
      tracking: trackingOf(tracked),
    };
    res.json(body);
  };
}
