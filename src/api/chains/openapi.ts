import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { ExecutionSchema } from "../executions/schemas.js";
import { authProblems, problem, rolesNote } from "../openapi/common.js";
import {
  AssetParams,
  AssetStatusResource,
  ChainIdParams,
  ContractParams,
  PriceFeedResource,
  SystemSettingsResource,
  TokenBalanceParams,
  TokenBalanceResource,
  TransactionBody,
} from "./schemas.js";

const json = <T extends z.ZodType>(schema: T) => ({ "application/json": { schema } });

export function registerChainsOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "post",
    path: "/v1/chains/{chainId}/transactions",
    operationId: "startChainTransaction",
    tags: ["chains"],
    summary: "Start an on-chain write through the transaction lifecycle",
    description:
      "Starts `chain.transaction` for the key's organisation (never the body's). `valueWei` and `gasLimit` are " +
      "decimal integer strings. The status resource's `progress.milestone` is 1 accepted, 2 signed and " +
      "submitted (with `hash` and `nonce`), 3 receipt or finality met; a wait of kind `funding` carries the " +
      "destination, required amount and deadline; the result's `verdict` is `confirmed` or `reverted`, and " +
      "failures carry `details.verdict` `rejected` or `expired` (e.g. GAS_REQUIRED naming the shortfall). " +
      `Optional \`Idempotency-Key\` as for executions. ${rolesNote("start")}`,
    request: {
      params: ChainIdParams,
      headers: z.object({ "idempotency-key": z.string().optional() }),
      body: { required: true, content: json(TransactionBody) },
    },
    responses: {
      202: {
        description: "Accepted; `Location` names the status resource.",
        headers: { Location: { schema: { type: "string" }, description: "`/v1/executions/{id}`" } },
        content: json(ExecutionSchema),
      },
      400: problem("MALFORMED_JSON or REQUEST_INVALID (field `errors`)."),
      ...authProblems("start"),
      404: problem(
        "CHAIN_UNKNOWN: the path's chain is not configured (`details.chainId`, `details.configured`).",
      ),
      413: problem("PAYLOAD_TOO_LARGE."),
      415: problem("UNSUPPORTED_MEDIA_TYPE."),
      422: problem("IDEMPOTENCY_KEY_REUSED."),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/chains/{chainId}/tokens/{address}/balances/{holder}",
    operationId: "getTokenBalance",
    tags: ["chains"],
    summary: "A holder's ERC-20 balance from the Ledger Index",
    description:
      "The balance and total supply folded from the token's Transfer logs as indexed, for a token the key's " +
      "organisation tracks. `asOfBlock` is the indexed height; a token the organisation stopped tracking answers " +
      `as of its removal height. ${rolesNote("read")}`,
    request: { params: TokenBalanceParams },
    responses: {
      200: { description: "The balance.", content: json(TokenBalanceResource) },
      400: problem("REQUEST_INVALID (field `errors`)."),
      ...authProblems("read"),
      404: problem("LEDGER_SCOPE_NOT_FOUND: the organisation does not track this token on this chain."),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/chains/{chainId}/price-feeds/{address}",
    operationId: "getPriceFeed",
    tags: ["chains"],
    summary: "A price feed and its latest observation from the Ledger Index",
    description:
      "The feed's FeedCreated facts (asset, owner, decimals) and its latest ObservationSubmitted as indexed, for a " +
      "feed the key's organisation tracks. A feed the organisation stopped tracking answers as of its removal " +
      `height. ${rolesNote("read")}`,
    request: { params: ContractParams },
    responses: {
      200: { description: "The feed.", content: json(PriceFeedResource) },
      400: problem("REQUEST_INVALID (field `errors`)."),
      ...authProblems("read"),
      404: problem("LEDGER_SCOPE_NOT_FOUND: the organisation does not track this feed on this chain."),
      503: problem("LEDGER_NOT_INDEXED (retryable): the feed's FeedCreated log is not indexed yet."),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/chains/{chainId}/assets/{asset}/status",
    operationId: "getAssetStatus",
    tags: ["chains"],
    summary: "An asset's status under the organisation's price resolvers",
    description:
      "`paused` until one of the organisation's tracked (not removed) price resolvers sets a staleness bound for " +
      "the asset, `active` from that bound's block on, with the latest bound's resolver, feed and maximum age. " +
      rolesNote("read"),
    request: { params: AssetParams },
    responses: {
      200: { description: "The status.", content: json(AssetStatusResource) },
      400: problem("REQUEST_INVALID (field `errors`)."),
      ...authProblems("read"),
      404: problem(
        "LEDGER_SCOPE_NOT_FOUND: no price feed or resolver the organisation tracks names the asset on this chain.",
      ),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/chains/{chainId}/system-settings/{address}",
    operationId: "getSystemSettings",
    tags: ["chains"],
    summary: "A system-settings contract's current values from the Ledger Index",
    description:
      "Each key's latest SettingChanged value as indexed, for a contract the key's organisation tracks; a contract " +
      `the organisation stopped tracking answers as of its removal height. ${rolesNote("read")}`,
    request: { params: ContractParams },
    responses: {
      200: { description: "The settings.", content: json(SystemSettingsResource) },
      400: problem("REQUEST_INVALID (field `errors`)."),
      ...authProblems("read"),
      404: problem("LEDGER_SCOPE_NOT_FOUND: the organisation does not track this contract on this chain."),
    },
  });
}
