import { z } from "zod";
import { TransactionRequest } from "../../chain/lifecycle/transaction-schemas.js";

/** `/v1/chains/{chainId}/...`: an EIP-155 chain id. */
export const ChainIdParams = z.object({
  chainId: z.coerce.number().int("must be an integer").positive("must be a positive chain id"),
});

/**
 * The body of `POST /v1/chains/{chainId}/transactions`: the lifecycle's input without what the
 * platform sets itself (the organisation comes from the key, the chain from the path). Derived
 * from the workflow's schema, so the route, the OpenAPI component and the workflow never disagree.
 */
export const TransactionBody = TransactionRequest.omit({ orgId: true, chainId: true })
  .strict()
  .superRefine((body, ctx) => {
    if (body.paymaster && !body.account)
      ctx.addIssue({
        code: "custom",
        path: ["paymaster"],
        input: body.paymaster,
        message: "needs `account`: a paymaster pays gas only for a UserOperation",
      });
  })
  .meta({ id: "ChainTransactionRequest" });

const ADDRESS = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x-prefixed 20-byte address");

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
