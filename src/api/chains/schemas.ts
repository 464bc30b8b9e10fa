import { z } from "zod";
import { attributionSuffix } from "../../chain/attribution.js";
import { deploymentIssue, TransactionRequest } from "../../chain/lifecycle/transaction-schemas.js";
import { LEDGER_SCOPE_KINDS } from "../../ledger-index/ledger-scope.js";
import { addressTextSchema } from "../../values/address.js";
import { chainIdParameter } from "../query-params.js";

/** `/v1/chains/{chainId}/...`: an EIP-155 chain id. */
export const ChainIdParams = z.object({
  chainId: chainIdParameter,
});

/**
 * The body of `POST /v1/chains/{chainId}/transactions`: the lifecycle's input without the chain,
 * which comes from the path (the organisation is the key's; a body naming one is refused). Derived
 * from the workflow's schema, so the route, the OpenAPI component and the workflow never disagree.
 */
export const TransactionBody = TransactionRequest.omit({ chainId: true })
  .strict()
  .superRefine((body, ctx) => {
    if (body.paymaster && !body.account)
      ctx.addIssue({
        code: "custom",
        path: ["paymaster"],
        input: body.paymaster,
        message: "needs `account`: a paymaster pays gas only for a UserOperation",
      });
    const deploy = deploymentIssue(body, suffixBytes(body.attribution));
    if (deploy)
      ctx.addIssue({
        code: "custom",
        path: [deploy.field],
        input: body[deploy.field],
        message: deploy.message,
      });
  })
  .meta({ id: "ChainTransactionRequest" });

/** The attribution suffix's length; codes that cannot be encoded are the lifecycle's ATTRIBUTION_INVALID. */
function suffixBytes(codes: readonly string[]): number {
  try {
    return (attributionSuffix(codes).length - 2) / 2;
  } catch {
    return 0;
  }
}

const ADDRESS = addressTextSchema();

/** `/v1/chains/{chainId}/tokens/{address}/balances/{holder}`. */
export const TokenBalanceParams = ChainIdParams.extend({ address: ADDRESS, holder: ADDRESS });

/** A holder's balance of a tracked ERC-20 token, from the Ledger Index. */
export const TokenBalanceResource = z
  .object({
    chainId: z.number().int(),
    token: z.string().meta({ description: "Lowercase token address." }),
    holder: z.string().meta({ description: "Lowercase holder address." }),
    balance: z.string().meta({ description: "Decimal integer in the token's base unit." }),
    totalSupply: z.string().meta({ description: "Decimal integer in the token's base unit." }),
    asOfBlock: z.string().meta({
      description:
        "The block the answer is as of: the indexed height, or the removal height of an untracked token.",
    }),
    tracking: z.object({ addedHeight: z.string(), removedHeight: z.string().nullable() }),
  })
  .meta({ id: "TokenBalance" });

/** `/v1/chains/{chainId}/price-feeds/{address}` and `/v1/chains/{chainId}/system-settings/{address}`. */
export const ContractParams = ChainIdParams.extend({ address: ADDRESS });

/** `/v1/chains/{chainId}/assets/{asset}/status`. */
export const AssetParams = ChainIdParams.extend({ asset: ADDRESS });

const Tracking = z.object({ addedHeight: z.string(), removedHeight: z.string().nullable() }).meta({
  description: "The organisation's tracking of the contract; a removed one answers as of `removedHeight`.",
});

const Observation = z.object({
  roundId: z.string(),
  answer: z.string().meta({ description: "Signed decimal integer in units of 10^-decimals." }),
  updatedAt: z.string().meta({ description: "The feed's timestamp, seconds since the epoch." }),
  blockNumber: z.string(),
  logIndex: z.number().int(),
});

/** A tracked price feed from the Ledger Index: its FeedCreated facts and latest observation. */
export const PriceFeedResource = z
  .object({
    chainId: z.number().int(),
    feed: z.string(),
    asset: z.string(),
    owner: z.string(),
    decimals: z.number().int(),
    createdAtBlock: z.string(),
    latest: Observation.nullable(),
    asOfBlock: z
      .string()
      .meta({ description: "The indexed height, or the removal height of an untracked feed." }),
    tracking: Tracking,
  })
  .meta({ id: "PriceFeed" });

/** An asset's status under the organisation's live price resolvers. */
export const AssetStatusResource = z
  .object({
    chainId: z.number().int(),
    asset: z.string(),
    status: z.enum(["paused", "active"]),
    resolver: z.string().nullable(),
    feed: z.string().nullable(),
    maxAgeSeconds: z.string().nullable(),
    activeSinceBlock: z.string().nullable(),
    boundAtBlock: z.string().nullable(),
    asOfBlock: z.string(),
  })
  .meta({ id: "AssetStatus" });

/** Every key's latest value of a tracked system-settings contract. */
export const SystemSettingsResource = z
  .object({
    chainId: z.number().int(),
    contract: z.string(),
    settings: z.array(
      z.object({
        key: z.string().meta({ description: "bytes32, 0x-prefixed lowercase hex." }),
        value: z.string().meta({ description: "bytes32, 0x-prefixed lowercase hex." }),
        blockNumber: z.string(),
      }),
    ),
    asOfBlock: z.string(),
    tracking: Tracking,
  })
  .meta({ id: "SystemSettings" });

/** A block height as the API takes it: a JSON integer or a decimal integer string (0 ≤ v < 2^63). */
const HEIGHT = z
  .union([z.int().min(0), z.string().regex(/^(0|[1-9][0-9]{0,18})$/, "must be a decimal integer ≥ 0")])
  // Refinements run after a failed pattern too: only a decimal string is converted.
  .refine((v) => !/^[0-9]+$/.test(String(v)) || BigInt(v) <= 9_223_372_036_854_775_807n, "must be below 2^63")
  .meta({ description: "A block height: a JSON integer or a decimal integer string." });

/** The body of `POST /v1/chains/{chainId}/tracked-contracts`. */
export const TrackContractBody = z
  .object({
    address: ADDRESS.meta({ description: "The contract, already deployed on the chain." }),
    kind: z.enum(LEDGER_SCOPE_KINDS).default("erc20").meta({
      description: "What the index reads of it (docs/ledger-index.md, Decoding); default `erc20`.",
    }),
    fromHeight: HEIGHT.meta({
      description:
        "The first block whose logs count (usually the contract's deployment block); at most the chain's head.",
    }),
  })
  .strict()
  .meta({ id: "TrackContractRequest" });

/** One contract the organisation tracks on a chain. */
export const TrackedContractResource = z
  .object({
    chainId: z.number().int(),
    address: z.string().meta({ description: "Lowercase contract address." }),
    kind: z.enum(LEDGER_SCOPE_KINDS),
    fromHeight: z.string().meta({ description: "The first block whose logs count." }),
    removedHeight: z
      .string()
      .nullable()
      .meta({ description: "The last block whose logs count, once no longer tracked." }),
  })
  .meta({ id: "TrackedContract" });

export const TrackedContractListResource = z
  .object({ chainId: z.number().int(), items: z.array(TrackedContractResource) })
  .meta({ id: "TrackedContractList" });
