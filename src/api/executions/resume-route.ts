import type { Request, Response } from "express";
import { z } from "zod";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import type { ApiDeps } from "../api-deps.js";
import { API_ERRORS } from "../api-error-codes.js";
import { principalOf } from "../auth/authenticate.js";
import { apiError } from "../problem.js";
import { notFound, requireExecution } from "./read-routes.js";

export const ResumeAcceptedSchema = z
  .object({
    executionId: z.uuid(),
    held: z
      .boolean()
      .meta({ description: "True when it was held for non-determinism or a missing version." }),
    wakeAt: z.string().meta({ description: "The new wake time: now." }),
  })
  .meta({ id: "ResumeAccepted" });

/**
 * `POST /v1/executions/{id}/resume`: a suspended execution (recovery back-off) or a held one
 * (non-determinism, a version no runner has) is retried now instead of at its wake time, and its
 * execution is woken. Anything else is refused with EXECUTION_NOT_SUSPENDED naming its status.
 */
export function resumeExecution(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const record = await requireExecution(deps, req, res);
    res.status(202).json(await resumeRun(deps, principalOf(res).orgId, record));
  };
}

/** Resumes `record` now and wakes it (the API route and the console's button); EXECUTION_NOT_SUSPENDED otherwise. */
export async function resumeRun(deps: ApiDeps, orgId: string, record: ExecutionRecord) {
  const result = await deps.commands.resume(orgId, record.id);
  if (result.kind === "not-found") throw notFound(record.id);
  if (result.kind === "not-suspended") {
    throw apiError(
      API_ERRORS.EXECUTION_NOT_SUSPENDED,
      `execution ${record.id} is ${result.status}; only a suspended or held execution can be resumed`,
      { executionId: record.id, status: result.status },
    );
  }
  await deps.transport.wake(record.id, result.workflow);
  return { executionId: record.id, held: result.held, wakeAt: result.wakeAt };
}
