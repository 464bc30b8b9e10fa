import type { Request, Response } from "express";
import type { ApprovalWaitDetails } from "../../engine/approvals.js";
import { ENGINE_ERRORS } from "../../engine/error-codes.js";
import { TenorError } from "../../errors/tenor-error.js";
import type { VoteOutcome, VoteRecord } from "../../store/pg-approvals.js";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import type { ApiDeps } from "../api-deps.js";
import { API_ERRORS } from "../api-error-codes.js";
import { type OrgPrincipal, principalOf } from "../auth/authenticate.js";
import { notFound, requireExecution } from "../executions/read-routes.js";
import { ExecutionIdParams } from "../executions/schemas.js";
import { wakeAgain } from "../executions/wake-again.js";
import { parseRequest } from "../http.js";
import { problem, rolesNote } from "../openapi/common.js";
import { apiError } from "../problem.js";
import { defineRoute, type RouteDeclaration } from "../route.js";
import { ApprovalListSchema, ApprovalParams, VoteBodySchema, VoteResultSchema } from "./schemas.js";

function castVote(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const { name } = parseRequest(ApprovalParams, req.params, "path");
    const body = parseRequest(VoteBodySchema, req.body ?? {}, "body");
    const record = await requireExecution(deps, req, res);
    res.status(202).json(await voteAs(deps, principalOf(res), record, name, body));
  };
}

/**
 * Records `principal`'s vote on approval `name` of `record` (the API route and the console's form
 * both vote through here); throws the refusal, or wakes the execution when the vote decided it.
 */
export async function voteAs(
  deps: ApiDeps,
  principal: OrgPrincipal,
  record: ExecutionRecord,
  name: string,
  vote: { decision: "approve" | "reject"; paramsHash: string; reason?: string | undefined },
) {
  const outcome = await deps.approvals.vote({
    orgId: principal.orgId,
    executionId: record.id,
    name,
    approver: {
      keyId: principal.keyId,
      name: principal.name,
      role: principal.role,
      subject: principal.subject,
    },
    decision: vote.decision,
    paramsHash: vote.paramsHash,
    reason: vote.reason ?? null,
  });
  if (outcome.kind !== "recorded") {
    // A vote already cast (or a decision already made) may have lost its wake: wake again.
    if (outcome.kind === "duplicate" || outcome.kind === "decided") await wakeAgain(deps, record);
    throw refusal(outcome, record.id, name);
  }
  if (outcome.decision) await deps.transport.wake(record.id, outcome.workflow);
  return {
    executionId: record.id,
    approval: name,
    position: outcome.pending.position,
    decision: vote.decision,
    approvals: outcome.approvals,
    quorum: outcome.pending.details.quorum,
    outcome: outcome.decision === null ? "pending" : outcome.decision.approved ? "approved" : "rejected",
    votes: outcome.votes.map(castVoteView),
  };
}

/** A vote as the API shows it: the approver's key, role and subject, and when it was cast (`approver.at`). */
function castVoteView(v: VoteRecord) {
  return {
    name: v.name,
    position: v.position,
    approver: { ...v.approver, subject: v.subject },
    decision: v.decision,
    paramsHash: v.paramsHash,
    reason: v.reason,
  };
}

function refusal(outcome: Exclude<VoteOutcome, { kind: "recorded" }>, id: string, name: string): TenorError {
  switch (outcome.kind) {
    case "not-found":
      return notFound(id);
    case "self-approval":
      return apiError(
        API_ERRORS.SELF_APPROVAL_FORBIDDEN,
        `whoever started execution ${id} (its subject, with any key) may not vote on its approval ${name}`,
        { executionId: id, approval: name },
      );
    case "not-pending":
      return new TenorError(
        API_ERRORS.APPROVAL_NOT_PENDING,
        `execution ${id} is ${outcome.status} and does not wait for approval ${name}` +
          (outcome.pending.length > 0 ? ` (it waits for: ${outcome.pending.join(", ")})` : ""),
        // A running turn may be about to park on it: worth asking again shortly.
        {
          retryable: outcome.status === "running",
          details: { executionId: id, approval: name, status: outcome.status },
        },
      );
    case "decided":
      return apiError(
        API_ERRORS.APPROVAL_ALREADY_DECIDED,
        `approval ${name} of execution ${id} is already decided`,
        {
          executionId: id,
          approval: name,
        },
      );
    case "params-changed":
      return new TenorError(
        ENGINE_ERRORS.APPROVAL_PARAMS_CHANGED,
        `approval ${name} of execution ${id} now asks for other parameters than the ones approved; review them again`,
        {
          details: { executionId: id, approval: name, currentParamsHash: outcome.pending.details.paramsHash },
        },
      );
    case "duplicate":
      return apiError(
        API_ERRORS.APPROVAL_DUPLICATE_VOTE,
        `this approver (subject) already voted on approval ${name}`,
        {
          executionId: id,
          approval: name,
          previous: outcome.previous,
        },
      );
  }
}

function listApprovals(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const record = await requireExecution(deps, req, res);
    const votes = await deps.approvals.list(principalOf(res).orgId, record.id);
    if (votes === null) throw notFound(record.id);
    const pending =
      record.status === "waiting"
        ? (record.waitingFor ?? [])
            .filter((w) => w.kind === "approval" && w.position !== undefined)
            .map((w) => {
              const details = w.details as unknown as ApprovalWaitDetails;
              return {
                name: w.name,
                position: w.position as number,
                params: details.params,
                paramsHash: details.paramsHash,
                quorum: details.quorum,
                until: w.until ?? null,
              };
            })
        : [];
    res.json({
      executionId: record.id,
      pending,
      votes: votes.map(castVoteView),
    });
  };
}

/**
 * Identity-bound approvals (README, "Approvals"). A vote names the hash of the parameters the
 * approver saw; the vote is refused when the workflow now asks for other parameters, when the
 * voter's subject started the execution (or its root, for a child), or when the subject already
 * voted: a quorum counts people, not keys. Every vote is audited, refused ones included. The
 * quorum's last approval, or any rejection, delivers the decision to the execution and wakes it.
 */
export const APPROVAL_ROUTES: readonly RouteDeclaration[] = [
  defineRoute({
    method: "post",
    path: "/v1/executions/{id}/approvals/{name}",
    permission: "approve",
    audit: { action: "approval.vote", target: (req) => `${req.params.id}/approvals/${req.params.name}` },
    jsonBody: true,
    openapi: {
      operationId: "voteOnApproval",
      tags: ["approvals"],
      summary: "Approve or reject a pending approval",
      description:
        "Identity-bound approvals. The approver's key id, name and role are recorded with the vote. " +
        "The vote must carry the `paramsHash` of the pending wait (from `waitingFor[].details` or " +
        "`GET /v1/executions/{id}/approvals`); another hash is refused with 409 APPROVAL_PARAMS_CHANGED. " +
        "The key that started the execution may not vote (403 SELF_APPROVAL_FORBIDDEN); nobody votes twice " +
        "(409 APPROVAL_DUPLICATE_VOTE). When approving votes reach the workflow's quorum (M of N), or on the first " +
        "rejection, the decision is delivered and the execution woken. The answer names every vote cast so far on " +
        `this approval (\`votes\`: who, with which key and role, what, when). ${rolesNote("approve")}`,
      request: {
        params: ApprovalParams,
        body: { required: true, content: { "application/json": { schema: VoteBodySchema } } },
      },
      responses: {
        202: { description: "Vote recorded.", content: { "application/json": { schema: VoteResultSchema } } },
        400: problem("MALFORMED_JSON or REQUEST_INVALID (field `errors`)."),
        404: problem("EXECUTION_NOT_FOUND."),
        409: problem(
          "APPROVAL_NOT_PENDING, APPROVAL_ALREADY_DECIDED, APPROVAL_DUPLICATE_VOTE or APPROVAL_PARAMS_CHANGED.",
        ),
      },
    },
    handler: castVote,
  }),
  defineRoute({
    method: "get",
    path: "/v1/executions/{id}/approvals",
    permission: "read",
    openapi: {
      operationId: "listApprovals",
      tags: ["approvals"],
      summary: "Pending approvals and the votes cast",
      description:
        "What each pending approval asks for, and every vote cast on the execution: who (key id, name, role and " +
        `subject), what, on which parameters' hash, with which reason, and when (\`approver.at\`). ${rolesNote("read")}`,
      request: { params: ExecutionIdParams },
      responses: {
        200: {
          description: "Pending approvals and votes.",
          content: { "application/json": { schema: ApprovalListSchema } },
        },
        404: problem("EXECUTION_NOT_FOUND."),
      },
    },
    handler: listApprovals,
  }),
];
