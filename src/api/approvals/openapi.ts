import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { ExecutionIdParams } from "../executions/schemas.js";
import { authProblems, problem, rolesNote } from "../openapi/common.js";
import { ApprovalListSchema, ApprovalParams, VoteBodySchema, VoteResultSchema } from "./schemas.js";

export function registerApprovalsOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "post",
    path: "/v1/executions/{id}/approvals/{name}",
    operationId: "voteOnApproval",
    tags: ["approvals"],
    summary: "Approve or reject a pending approval",
    description:
      "Identity-bound approvals. The approver's key id, name and role are recorded with the vote. " +
      "The vote must carry the `paramsHash` of the pending wait (from `waitingFor[].details` or " +
      "`GET /v1/executions/{id}/approvals`); another hash is refused with 409 APPROVAL_PARAMS_CHANGED. " +
      "The key that started the execution may not vote (403 SELF_APPROVAL_FORBIDDEN); nobody votes twice " +
      "(409 APPROVAL_DUPLICATE_VOTE). When approving votes reach the workflow's quorum (M of N), or on the first " +
      `rejection, the decision is delivered and the execution woken. ${rolesNote("approve")}`,
    request: {
      params: ApprovalParams,
      body: { required: true, content: { "application/json": { schema: VoteBodySchema } } },
    },
    responses: {
      202: { description: "Vote recorded.", content: { "application/json": { schema: VoteResultSchema } } },
      400: problem("MALFORMED_JSON or REQUEST_INVALID (field `errors`)."),
      ...authProblems("approve"),
      404: problem("EXECUTION_NOT_FOUND."),
      409: problem(
        "APPROVAL_NOT_PENDING, APPROVAL_ALREADY_DECIDED, APPROVAL_DUPLICATE_VOTE or APPROVAL_PARAMS_CHANGED.",
      ),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/executions/{id}/approvals",
    operationId: "listApprovals",
    tags: ["approvals"],
    summary: "Pending approvals and the votes cast",
    description: rolesNote("read"),
    request: { params: ExecutionIdParams },
    responses: {
      200: {
        description: "Pending approvals and votes.",
        content: { "application/json": { schema: ApprovalListSchema } },
      },
      ...authProblems("read"),
      404: problem("EXECUTION_NOT_FOUND."),
    },
  });
}
