import express, { type Express } from "express";
import helmet from "helmet";
import { handleHealthRequest } from "../observability/health-server.js";
import { BoardSessions } from "./admin/board-session.js";
import { bullBoardRouter } from "./admin/bull-board.js";
import { signInRouter } from "./admin/sign-in.js";
import { type AdmissionReason, createAdmission } from "./admission.js";
import type { ApiDeps } from "./api-deps.js";
import { ROUTES_AFTER_APPLICATION, ROUTES_BEFORE_APPLICATION } from "./api-routes.js";
import type { TaggedRoutes } from "./application-routes.js";
import { requestId } from "./audit/audit-trail.js";
import { consoleRouter } from "./console/console-router.js";
import { buildOpenApiDocument } from "./openapi/document.js";
import { problemHandler, routeNotFound } from "./problem.js";
import { apiRateLimit } from "./rate-limit.js";
import { mountRoutes, type RouteDeclaration } from "./route.js";

/** What the app is built from: the modules' dependencies, and the application's routes. */
export interface ApiAppOptions extends ApiDeps {
  /**
   * The application's own routes (`Application.routes`) over their stores, mounted and documented
   * like the platform's, between its reads and webhooks; default none.
   */
  applicationRoutes?: readonly TaggedRoutes<RouteDeclaration>[];
}

/**
 * The Platform API (README, "Platform API"). Composes the modules only: each module declares its
 * routes (schemas, handlers and OpenAPI paths in one declaration, src/api/route.ts). Order: request id, health and the OpenAPI document
 * (public), the per-key rate limit, the board's sign-in and Bull Board (their own auth and headers),
 * then security headers, the modules (each route authenticates and checks its role), and
 * problem+json for everything else — unknown routes, malformed JSON, oversized bodies and
 * unexpected errors alike. `close` releases the board's queues; `overload` is why admission
 * refuses every request right now (null when it would not, or when admission is off), what /readyz
 * reports on this port and the role's health port alike.
 */
export function createApiApp(options: ApiAppOptions): {
  app: Express;
  overload(): AdmissionReason | null;
  close(): Promise<void>;
} {
  const { applicationRoutes = [], ...deps } = options;
  const admission = deps.settings.admission
    ? createAdmission({
        settings: deps.settings.admission,
        poolWaitMs: deps.poolWaitMs ?? (() => 0),
        lagMs: deps.eventLoopLagMs ?? (() => 0),
        ...(deps.metrics ? { metrics: deps.metrics } : {}),
      })
    : undefined;
  const overload = () => admission?.refusal() ?? null;
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use(requestId());
  app.use(requestLog(deps));
  // Probes only: /metrics is served on the api's health port (api.healthPort), never publicly.
  app.get(["/livez", "/readyz"], async (req, res, next) => {
    const handled = await handleHealthRequest(req, res, {
      checks: deps.readiness,
      state: deps.health,
      overload,
    });
    if (!handled) next();
  });
  const document = JSON.stringify(
    buildOpenApiDocument(
      deps.registry.names().map((n) => deps.registry.get(n)),
      applicationRoutes,
    ),
  );
  app.get("/openapi.json", (_req, res) => {
    res.type("application/json").send(document);
  });
  // Past health and metrics, before any work: refuse at once when saturated.
  if (admission) app.use(admission.middleware);
  app.use(["/v1", "/admin", "/console"], apiRateLimit(deps.redis, deps.prefix, deps.settings.rateLimit));
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
  // The console sets its own headers (inline styles, forms to itself) and its own session checks.
  app.use(consoleRouter(deps, sessions));
  app.use(
    helmet({
      contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    }),
  );
  app.use(mountRoutes(deps, ROUTES_BEFORE_APPLICATION));
  for (const { routes } of applicationRoutes) app.use(mountRoutes(deps, routes));
  app.use(mountRoutes(deps, ROUTES_AFTER_APPLICATION));
  app.use(routeNotFound);
  // Admission's Retry-After serves the other 503 that says "try again shortly" too (its default,
  // 1 s, when admission is off).
  const retryAfterSeconds = deps.settings.admission?.retryAfterSeconds ?? 1;
  app.use(problemHandler(deps.logger, { retryAfterSeconds }));
  return { app, overload, close: board.close };
}

/**
 * One line and one metric sample per request: method, route template, status, duration. Never
 * headers, bodies, query values or the concrete path (which carries execution ids).
 */
function requestLog(deps: ApiDeps): express.RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = routeTemplate(req);
      deps.logger.debug("request", {
        method: req.method,
        route: req.route?.path ?? null,
        status: res.statusCode,
        durationMs: Math.round(seconds * 1000),
      });
      if (!deps.metrics) return;
      const method = KNOWN_METHODS.has(req.method) ? req.method : "OTHER";
      deps.metrics.apiRequests.inc({ method, route, status: String(res.statusCode) });
      deps.metrics.apiRequestDuration.observe({ method, route }, seconds);
    });
    next();
  };
}

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/**
 * The matched Express route template (`/v1/executions/:id`), or a fixed word when none matched,
 * so a metric label never carries an id or whatever path a client sent.
 */
function routeTemplate(req: express.Request): string {
  const path: unknown = req.route?.path;
  if (typeof path === "string") return `${req.baseUrl}${path}`;
  // A route registered for several literal paths (/livez, /readyz, /metrics): the one hit.
  if (Array.isArray(path) && path.includes(req.path)) return `${req.baseUrl}${req.path}`;
  if (req.originalUrl.startsWith("/admin/queues")) return "/admin/queues";
  return "unmatched";
}
