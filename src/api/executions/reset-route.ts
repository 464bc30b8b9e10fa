import type { Request, Response } from "express";
import { z } from "zod";
import { canonicalHash } from "../../engine/canonical-json.js";
import { resetPrefixRefusal } from "../../engine/reset-check.js";
import { TenorError } from "../../errors/tenor-error.js";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import type { ApiDeps } from "../api-deps.js";
import { type OrgPrincipal, principalOf } from "../auth/authenticate.js";
import { parseRequest } from "../http.js";
import { keyActor } from "./command-routes.js";
import { notFound, requireExecution } from "./read-routes.js";
import { ResetBodySchema } from "./reset-schemas.js";
import { IdempotencyKeySchema } from "./schemas.js";

/**
 * `POST /v1/executions/{id}/reset` with `{ position, reason }`: a held, suspended or failed run
 * continues on the newest registered version of its workflow from `position`; the positions from
 * there on are set aside, kept (docs/engine.md, "Reset"). With an Idempotency-Key, a repeat
 * answers the first reset again (`duplicate: true`).
 */
export function resetExecution(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const body = parseRequest(ResetBodySchema, req.body ?? {}, "body");
    const { "idempotency-key": idempotencyKey } = parseRequest(
      z.object({ "idempotency-key": IdempotencyKeySchema.optional() }),
      { "idempotency-key": req.headers["idempotency-key"] },
      "header",
    );
    const record = await requireExecution(deps, req, res);
    res
      .status(202)
      .json(
        await resetRun(deps, principalOf(res), record, { ...body, idempotencyKey: idempotencyKey ?? null }),
      );
  };
}

/** Resets `record` for `principal` and wakes it (the route, the console's form and bulk operations). */
export async function resetRun(
  deps: ApiDeps,
  principal: OrgPrincipal,
  record: Pick<ExecutionRecord, "id">,
  request: { position: number; reason: string; idempotencyKey: string | null },
) {
  const result = await deps.commands.reset({
    orgId: principal.orgId,
    executionId: record.id,
    position: request.position,
    reason: request.reason,
    actor: keyActor(principal),
    idempotencyKey: request.idempotencyKey,
    requestHash: canonicalHash({ position: request.position, reason: request.reason }),
    newestVersion: (workflow) => deps.registry.versions(workflow).at(-1) ?? null,
    replays: (run, toVersion, prefix) => resetPrefixRefusal(deps.registry, run, toVersion, prefix),
  });
  if (result.kind === "not-found") throw notFound(record.id);
  if (result.kind === "refused") {
    const { code, message, details } = result.refusal;
    throw new TenorError(code, message, { details });
  }
  // A repeat wakes again while no turn has taken the run: the first request's wake may have been
  // lost (the api died after the commit).
  if (result.wake) await deps.transport.wake(record.id, result.workflow);
  return {
    executionId: record.id,
    status: "running" as const,
    duplicate: result.duplicate,
    reset: result.reset,
  };
}
