import type { Request, Response } from "express";
import { ENGINE_ERRORS } from "../../engine/error-codes.js";
import { TenorError } from "../../errors/tenor-error.js";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import type { ApiDeps } from "../api-deps.js";
import { API_ERRORS } from "../api-error-codes.js";
import { type OrgPrincipal, principalOf } from "../auth/authenticate.js";
import { parseRequest } from "../http.js";
import { apiError } from "../problem.js";
import { keyActor } from "./command-routes.js";
import { notFound, requireExecution } from "./read-routes.js";
import { PauseBodySchema } from "./schemas.js";

/**
 * `POST /v1/executions/{id}/pause`, with an optional `{ reason }`: the run finishes the step it is
 * in, takes no new turn and shows `waiting` on a `pause` wait until it is unpaused
 * (docs/engine.md, "Pause"). Repeating it keeps the first pause. EXECUTION_TERMINAL once finished.
 */
export function pauseExecution(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const { reason } = parseRequest(PauseBodySchema, req.body ?? {}, "body");
    const record = await requireExecution(deps, req, res);
    res.status(202).json(await pauseRun(deps, principalOf(res), record, reason ?? null));
  };
}

/** `POST /v1/executions/{id}/unpause`: lifts the pause and wakes the run; EXECUTION_NOT_PAUSED when none. */
export function unpauseExecution(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const record = await requireExecution(deps, req, res);
    res.status(202).json(await unpauseRun(deps, principalOf(res), record));
  };
}

/** Pauses `record` for `principal` and wakes it so it parks on the pause now (the route and the console). */
export async function pauseRun(
  deps: ApiDeps,
  principal: OrgPrincipal,
  record: ExecutionRecord,
  reason: string | null,
) {
  const result = await deps.commands.pause(principal.orgId, record.id, {
    at: new Date().toISOString(),
    by: keyActor(principal),
    reason,
  });
  if (result.kind === "not-found") throw notFound(record.id);
  if (result.kind === "terminal") {
    throw new TenorError(
      ENGINE_ERRORS.EXECUTION_TERMINAL,
      `execution ${record.id} is ${result.status}; a finished run cannot be paused`,
      { details: { executionId: record.id, status: result.status } },
    );
  }
  if (result.wake) await deps.transport.wake(record.id, result.workflow);
  return { executionId: record.id, status: result.status, pause: result.pause };
}

/** Unpauses `record` and wakes it: its next turn replays the journal and goes on. */
export async function unpauseRun(deps: ApiDeps, principal: OrgPrincipal, record: ExecutionRecord) {
  const result = await deps.commands.unpause(principal.orgId, record.id);
  if (result.kind === "not-found") throw notFound(record.id);
  if (result.kind === "terminal") {
    throw new TenorError(
      ENGINE_ERRORS.EXECUTION_TERMINAL,
      `execution ${record.id} is ${result.status}; a finished run cannot be unpaused`,
      { details: { executionId: record.id, status: result.status } },
    );
  }
  if (result.kind === "not-paused") {
    throw apiError(
      API_ERRORS.EXECUTION_NOT_PAUSED,
      `execution ${record.id} is not paused (it is ${result.status}); only a paused run can be unpaused`,
      { executionId: record.id, status: result.status },
    );
  }
  if (result.wake) await deps.transport.wake(record.id, result.workflow);
  return { executionId: record.id, status: result.status, pause: result.pause };
}
