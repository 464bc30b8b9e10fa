import { randomUUID } from "node:crypto";
import type { Request, Response } from "express";
import type { z } from "zod";
import type { OperationRecord } from "../../store/pg-operations.js";
import type { ApiDeps } from "../api-deps.js";
import { API_ERRORS } from "../api-error-codes.js";
import { nameAuditTarget } from "../audit/audit-trail.js";
import { type OrgPrincipal, principalOf } from "../auth/authenticate.js";
import { keyActor } from "../executions/command-routes.js";
import { parseRequest } from "../http.js";
import { pageAfter, pageOf } from "../list-cursor.js";
import { apiError } from "../problem.js";
import {
  CreateOperationSchema,
  FailureListQuerySchema,
  OperationIdParams,
  OperationListQuerySchema,
} from "./schemas.js";

/** The resource of an operation, as `GET /v1/operations/{id}` answers it. */
export function toOperationResource(operation: OperationRecord) {
  return {
    id: operation.id,
    action: operation.action,
    filter: operation.filter,
    reason: operation.params.reason ?? null,
    signal: operation.params.signal ?? null,
    status: operation.status,
    total: operation.total,
    succeeded: operation.succeeded,
    failed: operation.failed,
    pending: operation.total - operation.succeeded - operation.failed,
    createdBy: operation.createdBy,
    abortRequestedBy: operation.abortRequestedBy,
    abortRequestedAt: operation.abortRequestedAt,
    createdAt: operation.createdAt,
    updatedAt: operation.updatedAt,
    finishedAt: operation.finishedAt,
  };
}

/**
 * `POST /v1/operations`: a dry run counts the runs the filter matches now; otherwise the
 * operation is created with those runs as its items and the runners work through them.
 */
export function createOperation(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const body = parseRequest(CreateOperationSchema, req.body, "body");
    const principal = principalOf(res);
    if (body.dryRun === true) {
      res.status(200).json(await countOperation(deps, principal.orgId, body));
      return;
    }
    const created = await startOperation(deps, principal, body);
    nameAuditTarget(res, created.id);
    res.status(201).location(`/v1/operations/${created.id}`).json(toOperationResource(created));
  };
}

type CreateOperationBody = z.infer<typeof CreateOperationSchema>;

/** An empty filter would act on every run of the organisation: OPERATION_FILTER_EMPTY. */
function refuseEmptyFilter(body: CreateOperationBody): void {
  if (Object.keys(body.filter).length > 0) return;
  throw apiError(
    API_ERRORS.OPERATION_FILTER_EMPTY,
    "the filter is empty: it would act on every run of the organisation; name at least one field",
    { errors: [{ pointer: "body.filter", message: "must name at least one field (got {})" }] },
  );
}

/** The dry run: how many runs the filter matches now, and the most one operation may act on. */
export async function countOperation(deps: ApiDeps, orgId: string, body: CreateOperationBody) {
  refuseEmptyFilter(body);
  const matched = await deps.operations.store.count(orgId, body.filter);
  return {
    dryRun: true as const,
    action: body.action,
    filter: body.filter,
    matched,
    maxItems: deps.operations.maxItems,
  };
}

/**
 * Creates the operation as `principal`, with the runs the filter matches now as its items. Refused
 * for an empty filter (OPERATION_FILTER_EMPTY) and one matching more than `maxItems`
 * (OPERATION_TOO_LARGE, with the count). The API and the console both create through it.
 */
export async function startOperation(
  deps: ApiDeps,
  principal: OrgPrincipal,
  body: CreateOperationBody,
): Promise<OperationRecord> {
  refuseEmptyFilter(body);
  const { store, maxItems } = deps.operations;
  const params = {
    ...(body.reason !== undefined ? { reason: body.reason } : {}),
    ...(body.signal !== undefined
      ? { signal: { name: body.signal.name, payload: body.signal.payload ?? null } }
      : {}),
  };
  const created = await store.create({
    id: randomUUID(),
    orgId: principal.orgId,
    action: body.action,
    filter: body.filter,
    params,
    createdBy: keyActor(principal),
    maxItems,
  });
  if (created.kind === "too-many") {
    throw apiError(
      API_ERRORS.OPERATION_TOO_LARGE,
      `the filter matches ${created.matched} runs; one operation acts on at most ${maxItems} (durable.operations.maxItems): narrow it, e.g. by createdBefore`,
      { matched: created.matched, maxItems },
    );
  }
  return created.operation;
}

export function listOperations(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const query = parseRequest(OperationListQuerySchema, req.query, "query");
    const rows = await deps.operations.store.list(
      principalOf(res).orgId,
      query.limit + 1,
      pageAfter(query.cursor),
    );
    const { page, nextCursor } = pageOf(rows, query.limit);
    res.json({ items: page.map(toOperationResource), nextCursor });
  };
}

export function getOperation(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    res.json(toOperationResource(await requireOperation(deps, req, res)));
  };
}

/** `GET /v1/operations/{id}/failures`: the runs the action was refused for, with their codes. */
export function listOperationFailures(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const operation = await requireOperation(deps, req, res);
    const query = parseRequest(FailureListQuerySchema, req.query, "query");
    const rows = await deps.operations.store.failures(operation.id, query.limit + 1, query.cursor);
    const page = rows.slice(0, query.limit);
    const nextCursor = rows.length > query.limit ? (page.at(-1)?.executionId ?? null) : null;
    res.json({ items: page, nextCursor });
  };
}

/**
 * `POST /v1/operations/{id}/abort`: the batch in progress finishes, the rest is left untouched and
 * the operation ends `aborted`. OPERATION_FINISHED when it already ended; repeating keeps the first
 * request.
 */
export function abortOperation(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const operation = await requireOperation(deps, req, res);
    res.status(202).json(toOperationResource(await abortOperationAs(deps, principalOf(res), operation)));
  };
}

/** Asks the runners to stop `operation`; OPERATION_FINISHED when it already ended. */
export async function abortOperationAs(
  deps: ApiDeps,
  principal: OrgPrincipal,
  operation: OperationRecord,
): Promise<OperationRecord> {
  if (operation.status !== "running") {
    throw apiError(
      API_ERRORS.OPERATION_FINISHED,
      `operation ${operation.id} is ${operation.status}; there is nothing to abort`,
      { operationId: operation.id, status: operation.status },
    );
  }
  const after = await deps.operations.store.requestAbort(principal.orgId, operation.id, keyActor(principal));
  return after ?? operation;
}

async function requireOperation(deps: ApiDeps, req: Request, res: Response): Promise<OperationRecord> {
  const { id } = parseRequest(OperationIdParams, req.params, "path");
  return findOperation(deps, principalOf(res).orgId, id);
}

/** The organisation's operation `id`; OPERATION_NOT_FOUND otherwise (another organisation's too). */
export async function findOperation(deps: ApiDeps, orgId: string, id: string): Promise<OperationRecord> {
  const operation = await deps.operations.store.get(orgId, id);
  if (!operation) {
    throw apiError(API_ERRORS.OPERATION_NOT_FOUND, `no operation ${id} in this organisation`, {
      operationId: id,
    });
  }
  return operation;
}
