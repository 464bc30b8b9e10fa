import type { Request, Response } from "express";
import type { z } from "zod";
import { APPROVAL_SIGNAL_PREFIX } from "../../engine/approvals.js";
import { canonicalHash } from "../../engine/canonical-json.js";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import type { ApiDeps } from "../api-deps.js";
import { type OrgPrincipal, principalOf } from "../auth/authenticate.js";
import { roleMay } from "../auth/permissions.js";
import type { ActivitySchema, PayloadSchema, RunLinkSchema } from "./activity-schemas.js";
import { notFound, requireExecution } from "./read-routes.js";

/** Children shown inline; the rest are a page of `GET /v1/executions?parentId=` away. */
export const ACTIVITY_CHILDREN = 20;

export type Activity = z.infer<typeof ActivitySchema>;

/** A payload's size and hash for every reader, its value only when `withValue`. */
export function payloadOf(value: unknown, withValue: boolean): z.infer<typeof PayloadSchema> {
  const stored = value ?? null;
  return {
    bytes: Buffer.byteLength(JSON.stringify(stored), "utf8"),
    sha256: canonicalHash(stored),
    ...(withValue ? { value: stored } : {}),
  };
}

function linkOf(r: ExecutionRecord): z.infer<typeof RunLinkSchema> {
  return { id: r.id, workflow: r.workflow, status: r.status, createdAt: r.createdAt };
}

/**
 * What happened to one run besides its journal: input and output, parent and children, every
 * signal delivered (who, when, payload), every vote and its audit entries. Payloads (input,
 * output, signal payloads) go to roles that may read payloads, as the journal's do; the others
 * get their size and hash. The audit entries go to roles that may read the audit trail.
 */
export async function activityOf(
  deps: ApiDeps,
  principal: OrgPrincipal,
  record: ExecutionRecord,
): Promise<Activity> {
  const withPayloads = roleMay(principal.role, "readPayloads");
  const withAudit = roleMay(principal.role, "auditRead");
  const [stored, parent, children, signals, votes, audit] = await Promise.all([
    deps.reads.input(record.orgId, record.id),
    record.parentId ? deps.reads.get(record.orgId, record.parentId) : Promise.resolve(null),
    deps.reads.list({ orgId: record.orgId, parentId: record.id, limit: ACTIVITY_CHILDREN + 1 }),
    deps.runActivity.signals(record.orgId, record.id),
    deps.approvals.list(record.orgId, record.id),
    withAudit ? deps.runActivity.audit(record.orgId, record.id) : Promise.resolve([]),
  ]);
  if (!stored || votes === null) throw notFound(record.id);
  const shown = children.slice(0, ACTIVITY_CHILDREN).reverse();
  return {
    executionId: record.id,
    payloadsIncluded: withPayloads,
    input: payloadOf(stored.input, withPayloads),
    output: record.status === "completed" ? payloadOf(record.output, withPayloads) : null,
    parent: parent ? linkOf(parent) : null,
    children: {
      items: shown.map(linkOf),
      more: children.length > ACTIVITY_CHILDREN ? `/v1/executions?parentId=${record.id}` : null,
    },
    signals: signals.map((s) => {
      const approval = s.name.startsWith(APPROVAL_SIGNAL_PREFIX);
      return {
        kind: approval ? ("approval" as const) : ("signal" as const),
        name: approval ? s.name.slice(APPROVAL_SIGNAL_PREFIX.length) : s.name,
        sentBy: s.sentBy,
        at: s.createdAt,
        consumedPosition: s.consumedPosition,
        consumedAt: s.consumedAt,
        payload: payloadOf(s.payload, withPayloads),
      };
    }),
    votes: votes.map((v) => ({
      approval: v.name,
      position: v.position,
      decision: v.decision,
      approver: { keyId: v.approver.keyId, name: v.approver.name, role: v.approver.role, subject: v.subject },
      at: v.approver.at,
      paramsHash: v.paramsHash,
      reason: v.reason,
    })),
    auditIncluded: withAudit,
    audit,
  };
}

/** `GET /v1/executions/{id}/activity`: see {@link activityOf}. */
export function getActivity(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const record = await requireExecution(deps, req, res);
    res.json(await activityOf(deps, principalOf(res), record));
  };
}
