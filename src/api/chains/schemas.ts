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
