import { z } from "zod";
import { ExecutionSchema } from "../executions/schemas.js";
import { problem, rolesNote } from "../openapi/common.js";
import { defineRoute, type RouteDeclaration } from "../route.js";
import { readTokenBalance } from "./balance-route.js";
import { ledgerDomainRoutes } from "./domain-routes.js";
import {
  AssetParams,
  AssetStatusResource,
  ChainIdParams,
  ContractParams,
  PriceFeedResource,
  SystemSettingsResource,
  TokenBalanceParams,
  TokenBalanceResource,
  TrackContractBody,
  TrackedContractListResource,
  TrackedContractResource,
  TransactionBody,
} from "./schemas.js";
import { listTrackedContracts, trackContract } from "./tracked-contracts-route.js";
import { startTransaction } from "./transaction-route.js";

const json = <T extends z.ZodType>(schema: T) => ({ "application/json": { schema } });

/** The chains module: on-chain writes through the transaction lifecycle (docs/chains.md) and Ledger Index reads. */
export const CHAIN_ROUTES: readonly RouteDeclaration[] = [
  defineRoute({
    method: "post",
    path: "/v1/chains/{chainId}/transactions",
    permission: "start",
    jsonBody: true,
    openapi: {
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
        404: problem(
          "CHAIN_UNKNOWN: the path's chain is not configured (`details.chainId`, `details.configured`).",
        ),
        413: problem("PAYLOAD_TOO_LARGE."),
        415: problem("UNSUPPORTED_MEDIA_TYPE."),
        422: problem("IDEMPOTENCY_KEY_REUSED."),
      },
    },
    handler: startTransaction,
  }),
  defineRoute({
    method: "post",
    path: "/v1/chains/{chainId}/tracked-contracts",
    permission: "trackContracts",
    audit: { action: "contract.track", target: (req) => `chains/${req.params.chainId}/tracked-contracts` },
    jsonBody: true,
    openapi: {
      operationId: "trackContract",
      tags: ["chains"],
      summary: "Add a contract already on chain to the organisation's Ledger Index scope",
      description:
        "Tracks a contract Tenor did not deploy (an ERC-20 already on chain, say) for the key's organisation from " +
        "`fromHeight`: the indexer catches its logs up from that block and follows it, and the Ledger Index reads " +
        "answer for it. Checked first: the chain is configured, `fromHeight` is at most the node's head, the address " +
        "holds code, and the organisation does not track it as that kind already. Audited (`contract.track`, target " +
        `naming chain, address, kind and height), refusals included. ${rolesNote("trackContracts")}`,
      request: {
        params: ChainIdParams,
        body: { required: true, content: json(TrackContractBody) },
      },
      responses: {
        201: { description: "Tracked from `fromHeight`.", content: json(TrackedContractResource) },
        400: problem("MALFORMED_JSON or REQUEST_INVALID (field `errors`: address format, kind, height)."),
        404: problem("CHAIN_UNKNOWN: the path's chain is not configured (`details.configured`)."),
        409: problem(
          "LEDGER_SCOPE_DUPLICATE: the organisation already tracks the contract as that kind (`details.fromHeight`).",
        ),
        422: problem(
          "LEDGER_SCOPE_INVALID: `fromHeight` above the chain's head (`details.head`), or no code at the address " +
            "(`details.field`, `value`, `rule`).",
        ),
        503: problem("RPC_UNAVAILABLE (retryable): the chain's node did not answer."),
      },
    },
    handler: trackContract,
  }),
  defineRoute({
    method: "get",
    path: "/v1/chains/{chainId}/tracked-contracts",
    permission: "read",
    openapi: {
      operationId: "listTrackedContracts",
      tags: ["chains"],
      summary: "The contracts the organisation's Ledger Index scope tracks on a chain",
      description:
        "Every contract the key's organisation tracks on the chain now (removed ones are left out), oldest first: " +
        `those its workflows deployed and those added through \`POST\`. ${rolesNote("read")}`,
      request: { params: ChainIdParams },
      responses: {
        200: { description: "The tracked contracts.", content: json(TrackedContractListResource) },
        400: problem("REQUEST_INVALID (field `errors`)."),
      },
    },
    handler: listTrackedContracts,
  }),
  defineRoute({
    method: "get",
    path: "/v1/chains/{chainId}/tokens/{address}/balances/{holder}",
    permission: "read",
    openapi: {
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
        404: problem("LEDGER_SCOPE_NOT_FOUND: the organisation does not track this token on this chain."),
      },
    },
    handler: readTokenBalance,
  }),
  defineRoute({
    method: "get",
    path: "/v1/chains/{chainId}/price-feeds/{address}",
    permission: "read",
    openapi: {
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
        404: problem("LEDGER_SCOPE_NOT_FOUND: the organisation does not track this feed on this chain."),
        503: problem("LEDGER_NOT_INDEXED (retryable): the feed's FeedCreated log is not indexed yet."),
      },
    },
    handler: (deps) => ledgerDomainRoutes(deps).priceFeed,
  }),
  defineRoute({
    method: "get",
    path: "/v1/chains/{chainId}/assets/{asset}/status",
    permission: "read",
    openapi: {
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
        404: problem(
          "LEDGER_SCOPE_NOT_FOUND: no price feed or resolver the organisation tracks names the asset on this chain.",
        ),
      },
    },
    handler: (deps) => ledgerDomainRoutes(deps).assetStatus,
  }),
  defineRoute({
    method: "get",
    path: "/v1/chains/{chainId}/system-settings/{address}",
    permission: "read",
    openapi: {
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
        404: problem("LEDGER_SCOPE_NOT_FOUND: the organisation does not track this contract on this chain."),
      },
    },
    handler: (deps) => ledgerDomainRoutes(deps).systemSettings,
  }),
];
