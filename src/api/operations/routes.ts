import type { z } from "zod";
import { problem, rolesNote } from "../openapi/common.js";
import { defineRoute, type RouteDeclaration } from "../route.js";
import {
  abortOperation,
  createOperation,
  getOperation,
  listOperationFailures,
  listOperations,
} from "./handlers.js";
import {
  CreateOperationSchema,
  DryRunSchema,
  FailureListQuerySchema,
  OperationFailureListSchema,
  OperationIdParams,
  OperationListQuerySchema,
  OperationListSchema,
  OperationSchema,
} from "./schemas.js";

const json = <T extends z.ZodType>(schema: T) => ({ "application/json": { schema } });

const HOW =
  "The runs the filter matches when the operation is created are its items (a snapshot: a run that matches " +
  "later is not acted on). The runners apply the action in batches (`durable.operations.batchSize`), record " +
  "each run's outcome, and go on after a restart where they stopped; a run the action is refused for is listed " +
  "under `/failures` with its code. Every action is safe to repeat, so a batch cut by a crash is applied again " +
  'without a second effect (docs/console.md, "Bulk operations"). `reset-to-version` resets each run onto the newest ' +
  "version of its workflow the runners register, from the first journal position that version does not replay " +
  '(docs/engine.md, "Reset").';

/** Bulk operations by query: create (with a dry run), list, read, failures, abort. */
export const OPERATION_ROUTES: readonly RouteDeclaration[] = [
  defineRoute({
    method: "post",
    path: "/v1/operations",
    permission: "operations",
    audit: { action: "operation.create", target: () => "operations" },
    jsonBody: true,
    openapi: {
      operationId: "createOperation",
      tags: ["operations"],
      summary:
        "Act on every run a filter matches: cancel, resume, signal, pause, unpause or reset-to-version",
      description: `${HOW} \`dryRun: true\` only counts. ${rolesNote("operations")}`,
      request: { body: { required: true, content: json(CreateOperationSchema) } },
      responses: {
        200: { description: "The dry run's count.", content: json(DryRunSchema) },
        201: {
          description: "Created; `Location` names it.",
          headers: { Location: { schema: { type: "string" }, description: "`/v1/operations/{id}`" } },
          content: json(OperationSchema),
        },
        400: problem("OPERATION_FILTER_EMPTY, MALFORMED_JSON or REQUEST_INVALID (field `errors`)."),
        422: problem("OPERATION_TOO_LARGE (`matched`, `maxItems`)."),
      },
    },
    handler: createOperation,
  }),
  defineRoute({
    method: "get",
    path: "/v1/operations",
    permission: "operations",
    openapi: {
      operationId: "listOperations",
      tags: ["operations"],
      summary: "The organisation's bulk operations, newest first",
      description: rolesNote("operations"),
      request: { query: OperationListQuerySchema },
      responses: { 200: { description: "One page.", content: json(OperationListSchema) } },
    },
    handler: listOperations,
  }),
  defineRoute({
    method: "get",
    path: "/v1/operations/{id}",
    permission: "operations",
    openapi: {
      operationId: "getOperation",
      tags: ["operations"],
      summary: "A bulk operation's progress",
      description: `Status, counts (total, succeeded, failed, pending), who created it and who aborted it. ${rolesNote("operations")}`,
      request: { params: OperationIdParams },
      responses: {
        200: { description: "The operation.", content: json(OperationSchema) },
        404: problem("OPERATION_NOT_FOUND (also for another organisation's)."),
      },
    },
    handler: getOperation,
  }),
  defineRoute({
    method: "get",
    path: "/v1/operations/{id}/failures",
    permission: "operations",
    openapi: {
      operationId: "listOperationFailures",
      tags: ["operations"],
      summary: "The runs a bulk operation's action was refused for",
      description: `Each with its stable code and message, in execution-id order. ${rolesNote("operations")}`,
      request: { params: OperationIdParams, query: FailureListQuerySchema },
      responses: {
        200: { description: "One page.", content: json(OperationFailureListSchema) },
        404: problem("OPERATION_NOT_FOUND."),
      },
    },
    handler: listOperationFailures,
  }),
  defineRoute({
    method: "post",
    path: "/v1/operations/{id}/abort",
    permission: "operations",
    audit: { action: "operation.abort", target: (req) => String(req.params.id) },
    openapi: {
      operationId: "abortOperation",
      tags: ["operations"],
      summary: "Stop a bulk operation",
      description: `The batch in progress finishes; the runs not yet acted on are left untouched and the operation ends \`aborted\`. Repeating keeps the first request. ${rolesNote("operations")}`,
      request: { params: OperationIdParams },
      responses: {
        202: { description: "Abort recorded.", content: json(OperationSchema) },
        404: problem("OPERATION_NOT_FOUND."),
        409: problem("OPERATION_FINISHED."),
      },
    },
    handler: abortOperation,
  }),
];
