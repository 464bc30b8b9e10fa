import { randomUUID } from "node:crypto";
import type { Request, Response } from "express";
import type { OperationRecord } from "../../store/pg-operations.js";
import type { ApiDeps } from "../api-deps.js";
import { API_ERRORS } from "../api-error-codes.js";
import { nameAuditTarget } from "../audit/audit-trail.js";
import { principalOf } from "../auth/authenticate.js";
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
 * operation is created with those runs as its items and the runners work through them. An empty
 * filter is refused (OPERATION_FILTER_EMPTY), and so is one matching more than `maxItems`
 * (OPERATION_TOO_LARGE, with the count).
 */
export function createOperation(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const body = parseRequest(CreateOperationSchema, req.body, "body");
    if (Object.keys(body.filter).length === 0) {
      throw apiError(
        API_ERRORS.OPERATION_FILTER_EMPTY,
        "the filter is empty: it would act on every run of the organisation; name at least one field",
        { errors: [{ pointer: "body.filter", message: "must name at least one field (got {})" }] },
      );
    }
    const principal = principalOf(res);
    const { store, maxItems } = deps.operations;
    if (body.dryRun === true) {
      const matched = await store.count(principal.orgId, body.filter);
      res.status(200).json({ dryRun: true, action: body.action, filter: body.filter, matched, maxItems });
      return;
    }
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
    nameAuditTarget(res, created.operation.id);
    res
      .status(201)
      .location(`/v1/operations/${created.operation.id}`)
      .json(toOperationResource(created.operation));
  };
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
    const principal = principalOf(res);
    if (operation.status !== "running") {
      throw apiError(
        API_ERRORS.OPERATION_FINISHED,
        `operation ${operation.id} is ${operation.status}; there is nothing to abort`,
        { operationId: operation.id, status: operation.status },
      );
    }
    const after = await deps.operations.store.requestAbort(
      principal.orgId,
      operation.id,
      keyActor(principal),
    );
    res.status(202).json(toOperationResource(after ?? operation));
  };
}

async function requireOperation(deps: ApiDeps, req: Request, res: Response): Promise<OperationRecord> {
  const { id } = parseRequest(OperationIdParams, req.params, "path");
  const operation = await deps.operations.store.get(principalOf(res).orgId, id);
  if (!operation) {
    throw apiError(API_ERRORS.OPERATION_NOT_FOUND, `no operation ${id} in this organisation`, {
      operationId: id,
    });
  }
  return operation;
}
