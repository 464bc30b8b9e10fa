import type { Request, Response } from "express";
import { z } from "zod";
import { CHAIN_ERRORS } from "../../chain/chain-error-codes.js";
import { chainTransaction } from "../../chain/lifecycle/transaction-workflow.js";
import { ENGINE_ERRORS } from "../../engine/error-codes.js";
import { TenorError } from "../../errors/tenor-error.js";
import type { ApiDeps } from "../api-deps.js";
import { principalOf } from "../auth/authenticate.js";
import { executionPath, toExecutionResource } from "../executions/resource.js";
import { IdempotencyKeySchema } from "../executions/schemas.js";
import { parseRequest } from "../http.js";
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
    const principal = principalOf(res);
    const { chainId } = parseRequest(ChainIdParams, req.params, "path");
    assertChainConfigured(chainId, deps.chainIds);
    const body = parseRequest(TransactionBody, req.body ?? {}, "body");
    const headers = parseRequest(
      z.object({ "idempotency-key": IdempotencyKeySchema.optional() }),
      { "idempotency-key": req.headers["idempotency-key"] },
      "header",
    );
    const idempotencyKey = headers["idempotency-key"];
    const { executionId, created } = await deps.client.start({
      workflow: chainTransaction.name,
      input: { ...body, chainId },
      orgId: principal.orgId,
      createdBy: principal.keyId,
      ...(idempotencyKey !== undefined
        ? { idempotencyKey, idempotencyTtlMs: deps.settings.idempotencyTtlSeconds * 1000 }
        : {}),
    });
    const record = await deps.reads.get(principal.orgId, executionId);
    if (!record) {
      throw new TenorError(ENGINE_ERRORS.EXECUTION_NOT_FOUND, `execution ${executionId} was not found`);
    }
    res.setHeader("Location", executionPath(executionId));
    if (!created) res.setHeader("Idempotent-Replayed", "true");
    res.status(202).json(toExecutionResource(record));
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
