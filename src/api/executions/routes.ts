import { z } from "zod";
import type { AnyWorkflow } from "../../engine/workflow.js";
import { problem, rolesNote } from "../openapi/common.js";
import { type DocumentedPath, defineRoute, type RouteDeclaration } from "../route.js";
import { getActivity } from "./activity.js";
import { ActivitySchema } from "./activity-schemas.js";
import { cancelExecution, deliverSignal } from "./command-routes.js";
import { pauseExecution, unpauseExecution } from "./pause-routes.js";
import { getExecution, getHistory, getSteps, listExecutions } from "./read-routes.js";
import { resetExecution } from "./reset-route.js";
import { ResetAcceptedSchema, ResetBodySchema } from "./reset-schemas.js";
import { ResumeAcceptedSchema, resumeExecution } from "./resume-route.js";
import {
  CancelAcceptedSchema,
  CancelBodySchema,
  ExecutionIdParams,
  ExecutionListSchema,
  ExecutionSchema,
  HistorySchema,
  ListQuerySchema,
  PauseAcceptedSchema,
  PauseBodySchema,
  SignalAcceptedSchema,
  SignalParams,
  StepListSchema,
  UnpauseAcceptedSchema,
} from "./schemas.js";
import { startExecution } from "./start-route.js";

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
function startPaths(workflows: readonly AnyWorkflow[]): DocumentedPath[] {
  const newest = new Map<string, AnyWorkflow>();
  for (const workflow of workflows) {
    const seen = newest.get(workflow.name);
    if (!seen || seen.version < workflow.version) newest.set(workflow.name, workflow);
  }
  return [...newest.values()]
    .filter((workflow) => workflow.startedThrough === undefined)
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((workflow) => ({
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
        404: problem("WORKFLOW_UNKNOWN."),
        413: problem("PAYLOAD_TOO_LARGE."),
        415: problem("UNSUPPORTED_MEDIA_TYPE."),
        422: problem("INPUT_INVALID (field `errors`) or IDEMPOTENCY_KEY_REUSED."),
      },
    }));
}

/** The executions module: start, list, read, journal, history, signal, cancel, resume, pause, unpause, reset. */
export const EXECUTION_ROUTES: readonly RouteDeclaration[] = [
  defineRoute({
    method: "post",
    path: "/v1/workflows/{name}/executions",
    permission: "start",
    jsonBody: true,
    openapi: ({ workflows }) => startPaths(workflows),
    handler: startExecution,
  }),
  defineRoute({
    method: "get",
    path: "/v1/executions",
    permission: "read",
    openapi: {
      operationId: "listExecutions",
      tags: ["executions"],
      summary: "List the organisation's executions, newest first",
      description: `Filters combine with AND; pages follow \`nextCursor\`. ${rolesNote("read")}`,
      request: { query: ListQuerySchema },
      responses: {
        200: { description: "One page.", content: json(ExecutionListSchema) },
        400: problem(
          "REQUEST_INVALID (field `errors`): an unknown status, a malformed code or another parameter out of its rule.",
        ),
      },
    },
    handler: listExecutions,
  }),
  defineRoute({
    method: "get",
    path: "/v1/executions/{id}",
    permission: "read",
    openapi: {
      operationId: "getExecution",
      tags: ["executions"],
      summary: "Status of an execution",
      description: `Status, what it waits for and until when, progress, result or failure, timestamps. ${rolesNote("read")}`,
      request: { params: ExecutionIdParams },
      responses: {
        200: { description: "The status resource.", content: json(ExecutionSchema) },
        404: problem("EXECUTION_NOT_FOUND (also for another organisation's execution)."),
      },
    },
    handler: getExecution,
  }),
  defineRoute({
    method: "get",
    path: "/v1/executions/{id}/steps",
    permission: "read",
    openapi: {
      operationId: "getExecutionSteps",
      tags: ["executions"],
      summary: "The journal of an execution",
      description: `Names, kinds, outcomes and timings; \`result\` and \`error\` payloads only for operator and admin. ${rolesNote("read")}`,
      request: { params: ExecutionIdParams },
      responses: {
        200: { description: "Journal positions in order.", content: json(StepListSchema) },
        404: problem("EXECUTION_NOT_FOUND."),
      },
    },
    handler: getSteps,
  }),
  defineRoute({
    method: "get",
    path: "/v1/executions/{id}/activity",
    permission: "read",
    openapi: {
      operationId: "getExecutionActivity",
      tags: ["executions"],
      summary: "Everything that happened to an execution besides its journal",
      description:
        "Input and output, parent and children (the first 20; `more` links the cursor-paged rest), every signal " +
        "delivered (name, the key that sent it, when, payload), every approval vote and the audit entries naming the " +
        "run. Kept apart from the status resource so that stays light whatever the payloads weigh. Payloads " +
        "(`value` of input, output and each signal) only for roles that may read payloads (operator, admin); the " +
        "others see each payload's `bytes` and `sha256`. Audit entries only for operator and admin. " +
        rolesNote("read"),
      request: { params: ExecutionIdParams },
      responses: {
        200: { description: "The run's activity.", content: json(ActivitySchema) },
        404: problem("EXECUTION_NOT_FOUND."),
      },
    },
    handler: getActivity,
  }),
  defineRoute({
    method: "get",
    path: "/v1/executions/{id}/history",
    permission: "readPayloads",
    openapi: {
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
        404: problem("EXECUTION_NOT_FOUND."),
      },
    },
    handler: getHistory,
  }),
  defineRoute({
    method: "post",
    path: "/v1/executions/{id}/signals/{name}",
    permission: "signal",
    audit: { action: "execution.signal", target: (req) => `${req.params.id}/signals/${req.params.name}` },
    jsonBody: true,
    openapi: {
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
        404: problem("EXECUTION_NOT_FOUND."),
        409: problem("EXECUTION_TERMINAL."),
        413: problem("PAYLOAD_TOO_LARGE."),
        415: problem("UNSUPPORTED_MEDIA_TYPE."),
        422: problem("SIGNAL_INVALID (field `errors`) or IDEMPOTENCY_KEY_REUSED."),
      },
    },
    handler: deliverSignal,
  }),
  defineRoute({
    method: "post",
    path: "/v1/executions/{id}/cancel",
    permission: "cancel",
    audit: { action: "execution.cancel", target: (req) => String(req.params.id) },
    jsonBody: true,
    openapi: {
      operationId: "cancelExecution",
      tags: ["executions"],
      summary: "Cancel an execution (cooperative)",
      description:
        "Records the request on the execution and its unfinished children and wakes them; the next turn ends each " +
        "`failed` with code CANCELLED. A step already running finishes first; an execution that completes before " +
        "its next turn stays completed. The optional body's `reason` and the calling key (id, name, subject, role) " +
        "are kept with the request and in the failure's `details` (`requestedBy`, `reason`), and shown as the " +
        "execution's `cancellation`. Repeating the request keeps the first time, key and reason. " +
        rolesNote("cancel"),
      request: { params: ExecutionIdParams, body: { required: false, content: json(CancelBodySchema) } },
      responses: {
        202: { description: "Cancellation requested.", content: json(CancelAcceptedSchema) },
        400: problem(
          "MALFORMED_JSON or REQUEST_INVALID (field `errors`: a reason too long, empty or not storable).",
        ),
        404: problem("EXECUTION_NOT_FOUND."),
        409: problem("EXECUTION_TERMINAL: it already completed or failed."),
      },
    },
    handler: cancelExecution,
  }),
  defineRoute({
    method: "post",
    path: "/v1/executions/{id}/resume",
    permission: "resume",
    audit: { action: "execution.resume", target: (req) => String(req.params.id) },
    jsonBody: true,
    openapi: {
      operationId: "resumeExecution",
      tags: ["executions"],
      summary: "Retry a suspended or held execution now",
      description:
        "Brings the wake time of a suspended execution (recovery back-off) or a held one (non-determinism, a " +
        "workflow version no runner has) forward to now and wakes it. Recovery counts are kept. " +
        rolesNote("resume"),
      request: { params: ExecutionIdParams },
      responses: {
        202: {
          description: "Woken.",
          content: { "application/json": { schema: ResumeAcceptedSchema } },
        },
        404: problem("EXECUTION_NOT_FOUND."),
        409: problem("EXECUTION_NOT_SUSPENDED: it is running, waiting, completed or failed."),
      },
    },
    handler: resumeExecution,
  }),
  defineRoute({
    method: "post",
    path: "/v1/executions/{id}/pause",
    permission: "pause",
    audit: { action: "execution.pause", target: (req) => String(req.params.id) },
    jsonBody: true,
    openapi: {
      operationId: "pauseExecution",
      tags: ["executions"],
      summary: "Pause a run: it finishes its current step and takes no new turn",
      description:
        "Records the pause (when, the calling key, the optional `reason`) and wakes the run. A turn running now " +
        "finishes the step it is in and stops before its next step once it reads the pause (at most half the " +
        "runner's lock duration later) or parks on the pause when it ends; a parked or suspended run parks on the " +
        "pause at its next turn. It then shows status `waiting` on a wait of kind `pause` (`summary`: " +
        "`paused by <subject>`) and `pause` on the resource, across runner restarts. Signals delivered meanwhile " +
        "are kept and timers that fall due do not run the body: both are seen after the unpause. Repeating the " +
        "request keeps the first pause. Only this run is paused, not its children. " +
        rolesNote("pause"),
      request: { params: ExecutionIdParams, body: { required: false, content: json(PauseBodySchema) } },
      responses: {
        202: { description: "Paused.", content: json(PauseAcceptedSchema) },
        400: problem(
          "MALFORMED_JSON or REQUEST_INVALID (field `errors`: a reason too long, empty or not storable).",
        ),
        404: problem("EXECUTION_NOT_FOUND."),
        409: problem("EXECUTION_TERMINAL: it already completed or failed."),
      },
    },
    handler: pauseExecution,
  }),
  defineRoute({
    method: "post",
    path: "/v1/executions/{id}/unpause",
    permission: "pause",
    audit: { action: "execution.unpause", target: (req) => String(req.params.id) },
    jsonBody: true,
    openapi: {
      operationId: "unpauseExecution",
      tags: ["executions"],
      summary: "Unpause a paused run",
      description:
        "Lifts the pause and wakes the run: its next turn replays the journal and goes on, consuming the signals " +
        "kept meanwhile and firing the timers that fell due. " +
        rolesNote("pause"),
      request: { params: ExecutionIdParams },
      responses: {
        202: { description: "Unpaused and woken.", content: json(UnpauseAcceptedSchema) },
        404: problem("EXECUTION_NOT_FOUND."),
        409: problem("EXECUTION_NOT_PAUSED (it is not paused) or EXECUTION_TERMINAL (it already finished)."),
      },
    },
    handler: unpauseExecution,
  }),
  defineRoute({
    method: "post",
    path: "/v1/executions/{id}/reset",
    permission: "reset",
    audit: { action: "execution.reset", target: (req) => String(req.params.id) },
    jsonBody: true,
    openapi: {
      operationId: "resetExecution",
      tags: ["executions"],
      summary: "Reset a held, suspended or failed run onto the newest version from a journal position",
      description:
        "In one transaction: journal positions at and after `position` are set aside (kept, with this reset's id, " +
        "key, time and reason; shown under `resets` in GET /v1/executions/{id} and in the evidence export), signals " +
        "they consumed are given back, and the run moves to the newest registered version of its workflow with " +
        "status `running`, then is woken. Refused when the run is running, waiting or completed, or failed after a " +
        "cancel, as a child or as a keyed run (EXECUTION_NOT_RESETTABLE, `details.status`); when `position` is " +
        "outside 0..journal length (RESET_POSITION_OUT_OF_RANGE); when a position to set aside started a child " +
        "or an activity still in flight (RESET_SETS_ASIDE_DISPATCHED); or when the newest version cannot replay " +
        "the positions kept — the dry replay of `tenor compat` — naming the first position that differs " +
        "(RESET_PREFIX_NOT_REPLAYABLE). With an `Idempotency-Key`, a repeat answers the first reset " +
        "(`duplicate: true`); the same key with another body is refused IDEMPOTENCY_KEY_REUSED. " +
        rolesNote("reset"),
      request: {
        params: ExecutionIdParams,
        headers: z.object({ "idempotency-key": z.string().optional() }),
        body: { required: true, content: json(ResetBodySchema) },
      },
      responses: {
        202: {
          description: "Reset and woken (or, with a repeated Idempotency-Key, the first reset).",
          content: json(ResetAcceptedSchema),
        },
        400: problem("MALFORMED_JSON or REQUEST_INVALID (field `errors`)."),
        404: problem("EXECUTION_NOT_FOUND."),
        409: problem(
          "EXECUTION_NOT_RESETTABLE, RESET_SETS_ASIDE_DISPATCHED or RESET_PREFIX_NOT_REPLAYABLE (`details.position`: the first position that differs).",
        ),
        422: problem("RESET_POSITION_OUT_OF_RANGE (`details.max`) or IDEMPOTENCY_KEY_REUSED."),
      },
    },
    handler: resetExecution,
  }),
];
