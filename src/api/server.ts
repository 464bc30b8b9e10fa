import express, { type Express } from "express";
import helmet from "helmet";
import { handleHealthRequest } from "../observability/health-server.js";
import { bullBoardRouter } from "./admin/bull-board.js";
import type { ApiDeps } from "./api-deps.js";
import { approvalsRouter } from "./approvals/routes.js";
import { chainsRouter } from "./chains/router.js";
import { executionsRouter } from "./executions/router.js";
import { buildOpenApiDocument } from "./openapi/document.js";
import { platformRouter } from "./platform/platform-status.js";
import { problemHandler, routeNotFound } from "./problem.js";

/**
 * The Platform API (DESIGN §6). Composes the modules only: each module owns its schemas, handlers
 * and OpenAPI paths. Order: health and the OpenAPI document (public), Bull Board (its own auth and
 * headers), then security headers, the modules (each route authenticates and checks its role), and problem+json for everything
 * else — unknown routes, malformed JSON, oversized bodies and unexpected errors alike.
 */
export function createApiApp(deps: ApiDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use(requestLog(deps));
  app.get(["/livez", "/readyz"], async (req, res) => {
    await handleHealthRequest(req, res, { checks: deps.readiness, state: deps.health });
  });
  const document = JSON.stringify(
    buildOpenApiDocument(deps.registry.names().map((n) => deps.registry.get(n))),
  );
  app.get("/openapi.json", (_req, res) => {
    res.type("application/json").send(document);
  });
  app.use(bullBoardRouter(deps.queues, deps.keys));
  app.use(
    helmet({
      contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    }),
  );
  app.use(executionsRouter(deps));
  app.use(approvalsRouter(deps));
  app.use(platformRouter(deps));
  app.use(chainsRouter(deps));
  app.use(routeNotFound);
  app.use(problemHandler(deps.logger));
  return app;
}

/** One line per request: method, route, status, duration. Never headers, bodies or query values. */
function requestLog(deps: ApiDeps): express.RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      deps.logger.debug("request", {
        method: req.method,
        route: req.route?.path ?? null,
        status: res.statusCode,
        durationMs: Number((process.hrtime.bigint() - started) / 1_000_000n),
      });
    });
    next();
  };
}
