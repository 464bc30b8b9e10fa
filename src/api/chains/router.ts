import { Router } from "express";
import type { ApiDeps } from "../api-deps.js";
import { guard } from "../auth/authenticate.js";
import { handler, jsonBody } from "../http.js";
import { readTokenBalance } from "./balance-route.js";
import { ledgerDomainRoutes } from "./domain-routes.js";
import { startTransaction } from "./transaction-route.js";

/** The chains module: on-chain writes through the transaction lifecycle (docs/chains.md) and Ledger Index reads. */
export function chainsRouter(deps: ApiDeps): Router {
  const router = Router();
  router.post(
    "/v1/chains/:chainId/transactions",
    ...guard(deps.keys, "start"),
    ...jsonBody(deps.settings.bodyLimitBytes),
    handler(startTransaction(deps)),
  );
  router.get(
    "/v1/chains/:chainId/tokens/:address/balances/:holder",
    ...guard(deps.keys, "read"),
    handler(readTokenBalance(deps)),
  );
  const domain = ledgerDomainRoutes(deps);
  router.get(
    "/v1/chains/:chainId/price-feeds/:address",
    ...guard(deps.keys, "read"),
    handler(domain.priceFeed),
  );
  router.get(
    "/v1/chains/:chainId/assets/:asset/status",
    ...guard(deps.keys, "read"),
    handler(domain.assetStatus),
  );
  router.get(
    "/v1/chains/:chainId/system-settings/:address",
    ...guard(deps.keys, "read"),
    handler(domain.systemSettings),
  );
  return router;
}
