import type { Request, Response } from "express";
import { z } from "zod";
import { ENGINE_ERRORS } from "../../engine/error-codes.js";
import { TenorError } from "../../errors/tenor-error.js";
import type { ApiDeps } from "../api-deps.js";
import { API_ERRORS } from "../api-error-codes.js";
import { principalOf } from "../auth/authenticate.js";
import { parseRequest } from "../http.js";
import { parsePreferWait } from "../prefer.js";
import { apiError } from "../problem.js";
import { chainWriteOf, waitUntilIndexed } from "./indexed-wait.js";
import { executionPath, toExecutionResource } from "./resource.js";
import { IdempotencyKeySchema, WorkflowNameParams } from "./schemas.js";

const TERMINAL = new Set(["completed", "failed"]);

/**
 * `POST /v1/workflows/{name}/executions`. The body is the workflow's input, validated (and typed
 * values decoded) by the workflow's own schema before anything is stored. Answers 202 with the
 * status resource; with `Prefer: wait=N` it waits up to N seconds (capped) and answers 200 once
 * the execution is terminal. A replayed Idempotency-Key answers the same execution the same way.
 * When the finished execution reports a chain write on a configured chain (`chainWriteOf`), the
 * answer also waits, within the same N seconds, for the Ledger Index to reach its block and says
 * whether it did in `Tenor-Indexed: true|false`.
 */
export function startExecution(deps: ApiDeps) {
  const ledger = deps.ledgerReads;
  return async (req: Request, res: Response): Promise<void> => {
    const startedAt = Date.now();
    const principal = principalOf(res);
    const { name } = parseRequest(WorkflowNameParams, req.params, "path");
    const definition = deps.registry.get(name); // WORKFLOW_UNKNOWN (404) before anything else
    if (definition.startedThrough !== undefined) {
      // Its own route holds the role and the checks this generic one does not know.
      throw apiError(API_ERRORS.FORBIDDEN, `${name} is started through ${definition.startedThrough} only`, {
        workflow: name,
        path: definition.startedThrough,
      });
    }
    const headers = parseRequest(
      z.object({ "idempotency-key": IdempotencyKeySchema.optional() }),
      { "idempotency-key": req.headers["idempotency-key"] },
      "header",
    );
    const idempotencyKey = headers["idempotency-key"];
    const prefer = parsePreferWait(req.headers.prefer, deps.settings.maxPreferWaitSeconds);
    const { executionId, created } = await deps.client.start({
      workflow: name,
      input: req.body,
      orgId: principal.orgId,
      createdBy: principal.keyId,
      ...(idempotencyKey !== undefined
        ? { idempotencyKey, idempotencyTtlMs: deps.settings.idempotencyTtlSeconds * 1000 }
        : {}),
    });
    if (created) deps.metrics?.executionsStarted.inc({ workflow: name });
    const read = async () => {
      const found = await deps.reads.get(principal.orgId, executionId);
      if (!found) {
        throw new TenorError(ENGINE_ERRORS.EXECUTION_NOT_FOUND, `execution ${executionId} was not found`);
      }
      return found;
    };
    // The read that sees the execution finished is the one the answer carries. An execution
    // this request created cannot have been announced before `startedAt`, so the wait may skip
    // reading it before its announcement; a replayed one may have finished long ago and is read
    // first, answering at once when it is terminal.
    const record =
      prefer && prefer.applied > 0
        ? await deps.client.waitUntilTerminal(
            executionId,
            prefer.applied * 1000,
            read,
            created ? { startedAt } : {},
          )
        : await read();
    const write = prefer && record.status === "completed" ? chainWriteOf(record.output, req.body) : null;
    if (prefer && write && deps.chainIds.includes(write.chainId)) {
      const deadline = startedAt + prefer.applied * 1000;
      const indexed = await waitUntilIndexed((chainId) => ledger.indexedHeight(chainId), write, deadline);
      res.setHeader("Tenor-Indexed", String(indexed));
    }
    const finished = prefer !== null && TERMINAL.has(record.status);
    res.setHeader("Location", executionPath(executionId));
    res.setHeader("Vary", "Prefer");
    if (prefer) res.setHeader("Preference-Applied", `wait=${prefer.applied}`);
    if (!created) res.setHeader("Idempotent-Replayed", "true");
    if (finished) res.setHeader("Content-Location", executionPath(executionId));
    res.status(finished ? 200 : 202).json(toExecutionResource(record));
  };
}
