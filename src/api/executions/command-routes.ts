import type { Request, Response } from "express";
import { z } from "zod";
import { canonicalJson } from "../../engine/canonical-json.js";
import { ENGINE_ERRORS } from "../../engine/error-codes.js";
import { inputIssues } from "../../engine/input-issues.js";
import { TenorError } from "../../errors/tenor-error.js";
import type { CancelActor } from "../../store/pg-cancellation.js";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import type { ApiDeps } from "../api-deps.js";
import { API_ERRORS } from "../api-error-codes.js";
import { type OrgPrincipal, type Principal, principalOf } from "../auth/authenticate.js";
import { parseRequest } from "../http.js";
import { apiError, type FieldError } from "../problem.js";
import { notFound, requireExecution } from "./read-routes.js";
import { cancellationOf } from "./resource.js";
import { CancelBodySchema, IdempotencyKeySchema, SignalParams } from "./schemas.js";
import { wakeAgain } from "./wake-again.js";

/**
 * `POST /v1/executions/{id}/signals/{name}`: stores the signal (kept until a wait consumes it) and
 * wakes the execution. The body is the payload; when the workflow declares the signal's schema it
 * is validated here. Its own Idempotency-Key: a replay answers `duplicate: true`; the same key with
 * another name or payload is refused with 422.
 */
export function deliverSignal(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const { name } = parseRequest(SignalParams, req.params, "path");
    refuseReservedSignal(name);
    const { "idempotency-key": idempotencyKey } = parseRequest(
      z.object({ "idempotency-key": IdempotencyKeySchema.optional() }),
      { "idempotency-key": req.headers["idempotency-key"] },
      "header",
    );
    const record = await requireExecution(deps, req, res);
    const payload = req.body ?? null;
    checkSignalPayload(deps, record, name, payload);
    // A replay answers as the original did, even after the execution finished; a reuse is refused.
    if (idempotencyKey !== undefined && (await isReplay(deps, record.id, idempotencyKey, name, payload))) {
      await wakeAgain(deps, record);
      res.status(202).json({ executionId: record.id, signal: name, duplicate: true });
      return;
    }
    const { delivered } = await deps.client.signal(record.id, name, payload, {
      orgId: record.orgId,
      sentBy: keyActor(principalOf(res)),
      ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
    });
    // Lost a race with a concurrent request carrying the same key: judge against what it stored.
    if (!delivered && idempotencyKey !== undefined)
      await isReplay(deps, record.id, idempotencyKey, name, payload);
    res.status(202).json({ executionId: record.id, signal: name, duplicate: !delivered });
  };
}

/** Signal names starting with "$" are the platform's (approval decisions): refused with SIGNAL_NAME_RESERVED. */
export function refuseReservedSignal(name: string): void {
  if (name.startsWith("$")) {
    throw apiError(API_ERRORS.SIGNAL_NAME_RESERVED, `signal names starting with "$" are reserved (${name})`, {
      signal: name,
    });
  }
}

/** Validates a signal's payload with the schema the workflow declares for it, if any (SIGNAL_INVALID). */
export function checkSignalPayload(
  deps: ApiDeps,
  record: ExecutionRecord,
  name: string,
  payload: unknown,
): void {
  const schema = deps.registry.has(record.workflow)
    ? deps.registry.get(record.workflow).signals?.[name]
    : undefined;
  if (!schema) return;
  const parsed = schema.safeParse(payload);
  if (parsed.success) return;
  const errors: FieldError[] = inputIssues(parsed.error).map((i) => ({
    pointer: i.path ? `body.${i.path}` : "body",
    message: i.message,
  }));
  throw apiError(API_ERRORS.SIGNAL_INVALID, `signal ${name} of ${record.workflow} is invalid`, { errors });
}

/** True when this key already delivered this very signal; IDEMPOTENCY_KEY_REUSED when it delivered another. */
async function isReplay(
  deps: ApiDeps,
  executionId: string,
  idempotencyKey: string,
  name: string,
  payload: unknown,
): Promise<boolean> {
  const stored = await deps.reads.findSignal(executionId, idempotencyKey);
  if (!stored) return false;
  if (stored.name !== name || canonicalJson(stored.payload) !== canonicalJson(payload)) {
    throw new TenorError(
      ENGINE_ERRORS.IDEMPOTENCY_KEY_REUSED,
      `idempotency key ${JSON.stringify(idempotencyKey)} was used for another signal of execution ${executionId}`,
      { details: { idempotencyKey, executionId } },
    );
  }
  return true;
}

/**
 * `POST /v1/executions/{id}/cancel`: cooperative cancellation, with an optional `{ reason }`. The
 * request is recorded on the execution and its unfinished children, with the key that asked and
 * the reason, and each is woken; its next turn ends it `failed` with code CANCELLED, whose details
 * keep who and why. A step already running finishes first. Repeating it is harmless.
 */
export function cancelExecution(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const { reason } = parseRequest(CancelBodySchema, req.body ?? {}, "body");
    const record = await requireExecution(deps, req, res);
    res.status(202).json(await cancelRun(deps, principalOf(res), record, reason ?? null));
  };
}

/** The key that asks for a cancellation or sends a signal, as it is recorded (no secret: id, label, subject, role). */
export function keyActor(principal: Principal): CancelActor {
  return { keyId: principal.keyId, name: principal.name, subject: principal.subject, role: principal.role };
}

/**
 * Requests cancellation of `record` (and its unfinished children) by `principal`, for `reason`,
 * and wakes each; the API route and the console's button both cancel through here.
 * EXECUTION_TERMINAL when it already finished.
 */
export async function cancelRun(
  deps: ApiDeps,
  principal: OrgPrincipal,
  record: ExecutionRecord,
  reason: string | null,
) {
  const result = await deps.commands.cancel(principal.orgId, record.id, {
    by: keyActor(principal),
    reason,
  });
  if (!result) throw notFound(record.id);
  if (!result.marked || result.cancelRequestedAt === null) {
    throw new TenorError(
      ENGINE_ERRORS.EXECUTION_TERMINAL,
      `execution ${record.id} is ${result.status}; there is nothing to cancel`,
      { details: { executionId: record.id, status: result.status } },
    );
  }
  for (const execution of result.executions) await deps.transport.wake(execution.id, execution.workflow);
  // The first request's facts: a repeated cancel does not rename who cancelled or why.
  const marked = await deps.reads.get(principal.orgId, record.id);
  const cancellation = (marked && cancellationOf(marked)) ?? {
    requestedAt: result.cancelRequestedAt,
    by: keyActor(principal),
    reason,
  };
  return {
    executionId: record.id,
    status: result.status,
    cancelRequestedAt: result.cancelRequestedAt,
    cancellation,
  };
}
