import type { Request, Response } from "express";
import { ENGINE_ERRORS } from "../../engine/error-codes.js";
import { recordHistory } from "../../engine/recorded-history.js";
import { TenorError } from "../../errors/tenor-error.js";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import type { ResetHistory } from "../../store/pg-reset.js";
import type { ApiDeps } from "../api-deps.js";
import { principalOf } from "../auth/authenticate.js";
import { roleMay } from "../auth/permissions.js";
import { parseRequest } from "../http.js";
import { pageAfter, pageOf } from "../list-cursor.js";
import { withChildFunding } from "./child-funding.js";
import { keyQueueFor } from "./key-queue.js";
import { toExecutionResource, toStep } from "./resource.js";
import { ExecutionIdParams, ListQuerySchema } from "./schemas.js";
import { stepTimings } from "./step-timing.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Another organisation's execution is reported exactly like a missing one (no existence oracle). */
export function notFound(id: string): TenorError {
  return new TenorError(ENGINE_ERRORS.EXECUTION_NOT_FOUND, `execution ${id} was not found`, {
    details: { executionId: id },
  });
}

/** The caller's organisation's execution named by the `id` path parameter, or EXECUTION_NOT_FOUND. */
export async function requireExecution(deps: ApiDeps, req: Request, res: Response): Promise<ExecutionRecord> {
  const { id } = parseRequest(ExecutionIdParams, req.params, "path");
  const record = UUID.test(id) ? await deps.reads.get(principalOf(res).orgId, id) : null;
  if (!record) throw notFound(id);
  return record;
}

/**
 * `GET /v1/executions/{id}`: status, waits (a child wait with the child's funding request),
 * progress, result or failure, timestamps, key lines.
 */
export function getExecution(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const record = await requireExecution(deps, req, res);
    const [shown, keyQueue, resets] = await Promise.all([
      withChildFunding((orgId, id) => deps.reads.get(orgId, id), record),
      keyQueueFor(deps.keyLines, record),
      deps.reads.resets(record.orgId, record.id),
    ]);
    res.json({ ...toExecutionResource(shown), keyQueue, resets: resets.map(withoutPayloads) });
  };
}

/** A reset as the run view shows it: the positions it set aside without their payloads. */
function withoutPayloads(reset: ResetHistory) {
  return {
    ...reset,
    entries: reset.entries.map(({ result: _result, error: _error, ...entry }) => entry),
  };
}

/** `GET /v1/executions/{id}/steps`: the journal; payloads only for roles allowed to read them. */
export function getSteps(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const record = await requireExecution(deps, req, res);
    const withPayloads = roleMay(principalOf(res).role, "readPayloads");
    const journal = await deps.client.journal(record.id, record.orgId);
    const timings = stepTimings(journal, record);
    res.json({
      executionId: record.id,
      payloadsIncluded: withPayloads,
      steps: journal.map((entry) => toStep(entry, withPayloads, timings.get(entry.position))),
    });
  };
}

/**
 * `GET /v1/executions/{id}/history`: the recorded history (journal with payloads, workflow name and
 * version, input, ending) that `tenor replay` runs against new code. Payloads: operator and admin only.
 */
export function getHistory(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const record = await requireExecution(deps, req, res);
    const [stored, journal] = await Promise.all([
      deps.reads.input(record.orgId, record.id),
      deps.client.journal(record.id, record.orgId),
    ]);
    if (!stored) throw notFound(record.id);
    res.json(
      recordHistory(
        {
          id: record.id,
          orgId: record.orgId,
          workflow: record.workflow,
          workflowVersion: record.workflowVersion,
          status: record.status,
          input: stored.input,
          output: record.output,
          failure: record.failure,
          journal,
        },
        new Date(),
      ),
    );
  };
}

/**
 * Which runs of a family a list selects (docs/console.md, "Filters"): a parent's children when
 * `parentId` names it; else top-level runs only, unless `includeChildren` asks for every run.
 * Child runs belong under their parent, not among the runs people started.
 */
export function familyOf(query: {
  parentId?: string | undefined;
  includeChildren: boolean;
}): { parentId: string } | { topLevel: true } | Record<string, never> {
  if (query.parentId !== undefined) return { parentId: query.parentId };
  return query.includeChildren ? {} : { topLevel: true };
}

/** `GET /v1/executions`: the organisation's executions, newest first, filtered, cursor-paged. */
export function listExecutions(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const query = parseRequest(ListQuerySchema, req.query, "query");
    const after = pageAfter(query.cursor);
    const rows = await deps.reads.list({
      orgId: principalOf(res).orgId,
      ...(query.workflow !== undefined ? { workflow: query.workflow } : {}),
      ...(query.status !== undefined ? { status: query.status } : {}),
      ...(query.code !== undefined ? { code: query.code } : {}),
      ...(query.key !== undefined ? { key: query.key } : {}),
      ...(query.idempotencyKey !== undefined ? { idempotencyKey: query.idempotencyKey } : {}),
      ...(query.createdAfter !== undefined ? { createdAfter: query.createdAfter } : {}),
      ...(query.createdBefore !== undefined ? { createdBefore: query.createdBefore } : {}),
      ...familyOf(query),
      ...(after !== undefined ? { after } : {}),
      limit: query.limit + 1,
    });
    const { page, nextCursor } = pageOf(rows, query.limit);
    res.json({ items: page.map(toExecutionResource), nextCursor });
  };
}
