import type { Response } from "express";
import { z } from "zod";
import { ENGINE_ERRORS } from "../../engine/error-codes.js";
import { TenorError } from "../../errors/tenor-error.js";
import type { ApiDeps } from "../api-deps.js";
import { principalOf } from "../auth/authenticate.js";
import { parseRequest } from "../http.js";
import { executionPath, toExecutionResource } from "./resource.js";
import { IdempotencyKeySchema } from "./schemas.js";

/** What starting an execution on a route's behalf needs of the API. */
export type ExecutionStarting = Pick<ApiDeps, "client" | "reads" | "settings">;

/** The `Idempotency-Key` header of a request, validated like the executions route's. */
export function idempotencyKeyOf(headers: Record<string, unknown>): string | undefined {
  return parseRequest(
    z.object({ "idempotency-key": IdempotencyKeySchema.optional() }),
    { "idempotency-key": headers["idempotency-key"] },
    "header",
  )["idempotency-key"];
}

/**
 * Starts `workflow` for the key's organisation and answers 202 with the execution's status
 * resource and its `Location`. Idempotency-Key works as on the executions route: the same key and
 * body answer the same execution (`Idempotent-Replayed: true`), never a second one.
 */
export async function startAndAnswer(
  deps: ExecutionStarting,
  res: Response,
  request: { workflow: string; input: unknown; idempotencyKey: string | undefined },
): Promise<void> {
  const principal = principalOf(res);
  const { executionId, created } = await deps.client.start({
    workflow: request.workflow,
    input: request.input,
    orgId: principal.orgId,
    createdBy: principal.keyId,
    ...(request.idempotencyKey !== undefined
      ? {
          idempotencyKey: request.idempotencyKey,
          idempotencyTtlMs: deps.settings.idempotencyTtlSeconds * 1000,
        }
      : {}),
  });
  const record = await deps.reads.get(principal.orgId, executionId);
  if (!record) {
    throw new TenorError(ENGINE_ERRORS.EXECUTION_NOT_FOUND, `execution ${executionId} was not found`);
  }
  res.setHeader("Location", executionPath(executionId));
  if (!created) res.setHeader("Idempotent-Replayed", "true");
  res.status(202).json(toExecutionResource(record));
}
