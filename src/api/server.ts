import express, { type Express } from "express";
import helmet from "helmet";
import { handleHealthRequest } from "../observability/health-server.js";
import { BoardSessions } from "./admin/board-session.js";
import { bullBoardRouter } from "./admin/bull-board.js";
import { signInRouter } from "./admin/sign-in.js";
import type { ApiDeps } from "./api-deps.js";
import { approvalsRouter } from "./approvals/routes.js";
import { requestId } from "./audit/audit-trail.js";
import { auditRouter } from "./audit/routes.js";
import { executionsRouter } from "./executions/router.js";
import { buildOpenApiDocument } from "./openapi/document.js";
import { platformRouter } from "./platform/platform-status.js";
import { problemHandler, routeNotFound } from "./problem.js";
import { apiRateLimit } from "./rate-limit.js";

/**
 * The Platform API (README, "Platform API"). Composes the modules only: each module owns its
 * schemas, handlers and OpenAPI paths. Order: request id, health and the OpenAPI document
 * (public), the per-key rate limit, the board's sign-in and Bull Board (their own auth and headers),
 * then security headers, the modules (each route authenticates and checks its role), and
 * problem+json for everything else — unknown routes, malformed JSON, oversized bodies and
 * unexpected errors alike. `close` releases the board's queues.
 */
export function createApiApp(deps: ApiDeps): { app: Express; close(): Promise<void> } {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use(requestId());
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
  app.use(["/v1", "/admin"], apiRateLimit(deps.redis, deps.prefix, deps.settings.rateLimit));
  const sessions = new BoardSessions(deps.redis, deps.prefix);
  app.use(signInRouter(deps.keys, sessions));
  const board = bullBoardRouter({
    keys: deps.keys,
    audit: deps.audit,
    logger: deps.logger,
    sessions,
    redis: deps.redis,
    prefix: deps.prefix,
  });
  app.use(board.router);
  app.use(
    helmet({
      contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    }),
  );
  app.use(executionsRouter(deps));
  app.use(approvalsRouter(deps));
  app.use(platformRouter(deps));
  app.use(auditRouter(deps));
  app.use(routeNotFound);
  app.use(problemHandler(deps.logger));
  return { app, close: board.close };
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
