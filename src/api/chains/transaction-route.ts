import type { Request, Response } from "express";
import { CHAIN_ERRORS } from "../../chain/chain-error-codes.js";
import { chainTransaction } from "../../chain/lifecycle/transaction-workflow.js";
import { TenorError } from "../../errors/tenor-error.js";
import type { ApiDeps, CustodySignerRef } from "../api-deps.js";
import { API_ERRORS } from "../api-error-codes.js";
import { principalOf } from "../auth/authenticate.js";
import { idempotencyKeyOf, startAndAnswer } from "../executions/start-answer.js";
import { parseRequest } from "../http.js";
import { apiError } from "../problem.js";
import { ChainIdParams, TransactionBody } from "./schemas.js";

/**
 * `POST /v1/chains/{chainId}/transactions`: starts the transaction lifecycle for the caller's
 * organisation (taken from the key; a body naming one is refused as an unknown field). Answers 202
 * with the execution's status resource, whose progress shows the milestone, hash and nonce, whose
 * waits show a funding request, and whose result carries the verdict. Idempotency-Key works as on
 * the executions route: the same key and body answer the same execution.
 */
export function startTransaction(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const { chainId } = parseRequest(ChainIdParams, req.params, "path");
    assertChainConfigured(chainId, deps.chainIds);
    const body = parseRequest(TransactionBody, req.body ?? {}, "body");
    if (body.to === undefined)
      refuseCustodyDeployment(body.signerId, principalOf(res).orgId, deps.custodySigners);
    await startAndAnswer(deps, res, {
      workflow: chainTransaction.name,
      input: { ...body, chainId },
      idempotencyKey: idempotencyKeyOf(req.headers),
    });
  };
}

/**
 * A write to a chain this deployment does not configure is refused before anything starts
 * (CHAIN_UNKNOWN, 404), naming the value and the configured ids, rather than accepted and failed later.
 */
export function assertChainConfigured(chainId: number, configured: readonly number[]): void {
  if (configured.includes(chainId)) return;
  throw new TenorError(
    CHAIN_ERRORS.CHAIN_UNKNOWN,
    `chain ${chainId} is not configured (configured: ${configured.length ? configured.join(", ") : "none"})`,
    { details: { chainId, configured: [...configured] } },
  );
}

/**
 * A deployment (no `to`) through a custody signer the caller's organisation may use is refused
 * before anything starts (400 REQUEST_INVALID naming `body.signerId`), like the other deployment
 * refusals: the provider's intents always name a callee (docs/chains.md, "Deploying a contract").
 * Another organisation's custody signer is not named here: its start fails SIGNER_UNKNOWN as for
 * any signer that is not the caller's.
 */
function refuseCustodyDeployment(
  signerId: string,
  orgId: string,
  custodySigners: readonly CustodySignerRef[],
): void {
  const custody = custodySigners.some(
    (s) => s.id === signerId && (s.orgId === undefined || s.orgId === orgId),
  );
  if (!custody) return;
  const message = `is custody signer ${signerId}, whose provider sends only calls with a callee: a deployment needs a local-key signer`;
  throw apiError(API_ERRORS.REQUEST_INVALID, `the request is invalid: body.signerId: ${message}`, {
    errors: [{ pointer: "body.signerId", message }],
  });
}
