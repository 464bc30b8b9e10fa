import { Router } from "express";
import type { ApiDeps } from "../api-deps.js";
import { audited } from "../audit/audit-trail.js";
import { guard } from "../auth/authenticate.js";
import { handler, jsonBody } from "../http.js";
import { cancelExecution, deliverSignal } from "./command-routes.js";
import { getExecution, getHistory, getSteps, listExecutions } from "./read-routes.js";
import { resumeExecution } from "./resume-route.js";
import { startExecution } from "./start-route.js";

/** The executions module: start, read, list, journal, history, signal, cancel, resume. */
export function executionsRouter(deps: ApiDeps): Router {
  const router = Router();
  const body = jsonBody(deps.settings.bodyLimitBytes);
  router.post(
    "/v1/workflows/:name/executions",
    ...guard(deps.keys, "start"),
    ...body,
    handler(startExecution(deps)),
  );
  router.get("/v1/executions", ...guard(deps.keys, "read"), handler(listExecutions(deps)));
  router.get("/v1/executions/:id", ...guard(deps.keys, "read"), handler(getExecution(deps)));
  router.get("/v1/executions/:id/steps", ...guard(deps.keys, "read"), handler(getSteps(deps)));
  router.get("/v1/executions/:id/history", ...guard(deps.keys, "readPayloads"), handler(getHistory(deps)));
  router.post(
    "/v1/executions/:id/signals/:name",
    audited(deps, "execution.signal", (req) => `${req.params.id}/signals/${req.params.name}`),
    ...guard(deps.keys, "signal"),
    ...body,
    handler(deliverSignal(deps)),
  );
  router.post(
    "/v1/executions/:id/cancel",
    audited(deps, "execution.cancel", (req) => String(req.params.id)),
    ...guard(deps.keys, "cancel"),
    ...body,
    handler(cancelExecution(deps)),
  );
  router.post(
    "/v1/executions/:id/resume",
    audited(deps, "execution.resume", (req) => String(req.params.id)),
    ...guard(deps.keys, "resume"),
    ...body,
    handler(resumeExecution(deps)),
  );
  return router;
}
