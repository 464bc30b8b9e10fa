import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import type { AnyWorkflow } from "../../engine/workflow.js";
import { authProblems, problem, rolesNote } from "../openapi/common.js";
import {
  CancelAcceptedSchema,
  ExecutionIdParams,
  ExecutionListSchema,
  ExecutionSchema,
  HistorySchema,
  ListQuerySchema,
  SignalAcceptedSchema,
  SignalParams,
  StepListSchema,
} from "./schemas.js";

const json = <T extends z.ZodType>(schema: T) => ({ "application/json": { schema } });

const IDEMPOTENCY =
  "Optional `Idempotency-Key` (IETF draft semantics), scoped to the organisation and stored in PostgreSQL " +
  "under a unique constraint. Same key and same body: the same execution, never a second one, also while " +
  "it runs or after it failed (a fresh attempt needs a new key); the response carries `Idempotent-Replayed: true`. " +
  "Same key and another body (or workflow): 422 IDEMPOTENCY_KEY_REUSED naming the key. A key is bound for " +
  "`api.idempotencyTtlSeconds` (default 24 h) from the first start; after that it is released and the next start " +
  "with it creates a new execution. A replay is answered like the original request would be now: 202, or 200 " +
  "when it carries `Prefer: wait` and the execution is terminal.";

const PREFER =
  "`Prefer: wait=N` (RFC 7240): wait up to N seconds, capped by `api.maxPreferWaitSeconds` (default 30), and " +
  "answer 200 with the result (or the failure) when the execution finished in time, else 202. The response " +
  "sends `Preference-Applied: wait=<applied>` and always `Vary: Prefer`.";

/** Workflow input schemas, given component ids once per process (zod's registry keeps ids global). */
const inputComponents = new WeakMap<AnyWorkflow, z.ZodType>();
function inputComponent(workflow: AnyWorkflow): z.ZodType {
  let schema = inputComponents.get(workflow);
  if (!schema) {
    schema = workflow.input.meta({ id: `WorkflowInput.${workflow.name}` }) as z.ZodType;
    inputComponents.set(workflow, schema);
  }
  return schema;
}

/**
 * One start path per registered workflow, each with the input schema of its newest version (the
 * one a start runs; older versions stay registered only to finish what started on them).
 */
function registerStarts(registry: OpenAPIRegistry, workflows: readonly AnyWorkflow[]): void {
  const newest = new Map<string, AnyWorkflow>();
  for (const workflow of workflows) {
    const seen = newest.get(workflow.name);
    if (!seen || seen.version < workflow.version) newest.set(workflow.name, workflow);
  }
  for (const workflow of [...newest.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    registry.registerPath({
      method: "post",
      path: `/v1/workflows/${workflow.name}/executions`,
      operationId: `start.${workflow.name}`,
      tags: ["executions"],
      summary: `Start ${workflow.name} (version ${workflow.version})`,
      description: `The body is validated by the workflow's own input schema; typed values are decoded before workflow code runs. ${rolesNote("start")}\n\n${PREFER}\n\n${IDEMPOTENCY}`,
      request: {
        headers: z.object({
          "idempotency-key": z.string().optional(),
          prefer: z.string().optional().meta({ example: "wait=10" }),
        }),
        body: { required: true, content: json(inputComponent(workflow)) },
      },
      responses: {
        200: {
          description: "Finished within the `Prefer: wait` window (completed or failed).",
          content: json(ExecutionSchema),
        },
        202: {
          description: "Accepted; `Location` names the status resource.",
          headers: { Location: { schema: { type: "string" }, description: "`/v1/executions/{id}`" } },
          content: json(ExecutionSchema),
        },
        400: problem("MALFORMED_JSON or REQUEST_INVALID (an invalid Idempotency-Key)."),
        ...authProblems("start"),
        404: problem("WORKFLOW_UNKNOWN."),
        413: problem("PAYLOAD_TOO_LARGE."),
        415: problem("UNSUPPORTED_MEDIA_TYPE."),
        422: problem("INPUT_INVALID (field `errors`) or IDEMPOTENCY_KEY_REUSED."),
      },
    });
  }
}

export function registerExecutionsOpenApi(
  registry: OpenAPIRegistry,
  workflows: readonly AnyWorkflow[],
): void {
  registerStarts(registry, workflows);
  registry.registerPath({
    method: "get",
    path: "/v1/executions",
    operationId: "listExecutions",
    tags: ["executions"],
    summary: "List the organisation's executions, newest first",
    description: `Filters combine with AND; pages follow \`nextCursor\`. ${rolesNote("read")}`,
    request: { query: ListQuerySchema },
    responses: {
      200: { description: "One page.", content: json(ExecutionListSchema) },
      400: problem("REQUEST_INVALID (field `errors`)."),
      ...authProblems("read"),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/executions/{id}",
    operationId: "getExecution",
    tags: ["executions"],
    summary: "Status of an execution",
    description: `Status, what it waits for and until when, progress, result or failure, timestamps. ${rolesNote("read")}`,
    request: { params: ExecutionIdParams },
    responses: {
      200: { description: "The status resource.", content: json(ExecutionSchema) },
      ...authProblems("read"),
      404: problem("EXECUTION_NOT_FOUND (also for another organisation's execution)."),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/executions/{id}/steps",
    operationId: "getExecutionSteps",
    tags: ["executions"],
    summary: "The journal of an execution",
    description: `Names, kinds, outcomes and timings; \`result\` and \`error\` payloads only for operator and admin. ${rolesNote("read")}`,
    request: { params: ExecutionIdParams },
    responses: {
      200: { description: "Journal positions in order.", content: json(StepListSchema) },
      ...authProblems("read"),
      404: problem("EXECUTION_NOT_FOUND."),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/v1/executions/{id}/history",
    operationId: "getExecutionHistory",
    tags: ["executions"],
    summary: "The recorded history of an execution, for replay",
    description:
      "Every journal position with its payload, the workflow name and version, the input and how the run ended: " +
      "the file `tenor replay <file>` replays against new code without a database, reporting the first " +
      `divergence (docs/writing-workflows.md). ${rolesNote("readPayloads")}`,
    request: { params: ExecutionIdParams },
    responses: {
      200: { description: "The recorded history.", content: json(HistorySchema) },
      ...authProblems("readPayloads"),
      404: problem("EXECUTION_NOT_FOUND."),
    },
  });
  registry.registerPath({
    method: "post",
    path: "/v1/executions/{id}/signals/{name}",
    operationId: "signalExecution",
    tags: ["executions"],
    summary: "Deliver a signal",
    description:
      "The body (any JSON) is the payload, validated by the schema the workflow declares for the signal when it " +
      "declares one. Kept until a wait consumes it. Optional `Idempotency-Key` of its own: a replay answers " +
      `\`duplicate: true\`; the same key with another name or payload is refused. ${rolesNote("signal")}`,
    request: {
      params: SignalParams,
      headers: z.object({ "idempotency-key": z.string().optional() }),
      body: { required: false, content: json(z.unknown()) },
    },
    responses: {
      202: { description: "Stored; the execution was woken.", content: json(SignalAcceptedSchema) },
      400: problem("MALFORMED_JSON or REQUEST_INVALID."),
      ...authProblems("signal"),
      404: problem("EXECUTION_NOT_FOUND."),
      409: problem("EXECUTION_TERMINAL."),
      413: problem("PAYLOAD_TOO_LARGE."),
      415: problem("UNSUPPORTED_MEDIA_TYPE."),
      422: problem("SIGNAL_INVALID (field `errors`) or IDEMPOTENCY_KEY_REUSED."),
    },
  });
  registry.registerPath({
    method: "post",
    path: "/v1/executions/{id}/cancel",
    operationId: "cancelExecution",
    tags: ["executions"],
    summary: "Cancel an execution (cooperative)",
    description:
      "Records the request on the execution and its unfinished children and wakes them; the next turn ends each " +
      "`failed` with code CANCELLED. A step already running finishes first; an execution that completes before " +
      `its next turn stays completed. Repeating the request keeps the first time. ${rolesNote("cancel")}`,
    request: { params: ExecutionIdParams },
    responses: {
      202: { description: "Cancellation requested.", content: json(CancelAcceptedSchema) },
      ...authProblems("cancel"),
      404: problem("EXECUTION_NOT_FOUND."),
      409: problem("EXECUTION_TERMINAL: it already completed or failed."),
    },
  });
}
