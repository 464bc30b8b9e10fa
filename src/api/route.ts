import type { OpenAPIRegistry, RouteConfig } from "@asteasolutions/zod-to-openapi";
import { type Request, type RequestHandler, type Response, Router } from "express";
import type { AnyWorkflow } from "../engine/workflow.js";
import type { AuditAction } from "../store/pg-audit.js";
import type { ApiDeps } from "./api-deps.js";
import { audited } from "./audit/audit-trail.js";
import { guard } from "./auth/authenticate.js";
import type { Permission } from "./auth/permissions.js";
import { handler, jsonBody } from "./http.js";
import { authProblems } from "./openapi/common.js";

export type RouteMethod = "get" | "post" | "delete";

/** What the document says of one operation; method, path and the 401/403 answers come from the route. */
export type RouteOperation = Omit<RouteConfig, "method" | "path">;

/** What the document is built for: the operations of a route may depend on the registered workflows. */
export interface DocumentContext {
  readonly workflows: readonly AnyWorkflow[];
}

/**
 * One route of the Platform API, declared once: the router mounts it, the OpenAPI document describes
 * it, and the tests list it, all from this value. `Deps` is what its handler reads: the platform's
 * routes read the ApiDeps, an application's the stores of its feature (src/api/application-routes.ts).
 */
export interface RouteDeclaration<Deps = ApiDeps> {
  readonly method: RouteMethod;
  /** The path as the document writes it (`/v1/executions/{id}`); the Express form is derived. */
  readonly path: string;
  /** The role check after authentication; the document states the same roles in its 403 answer. */
  readonly permission: Permission;
  /**
   * Records the request in the audit trail, refused ones included: mounted before the guard, so a
   * request refused for its role is recorded too.
   */
  readonly audit?: { readonly action: AuditAction; readonly target: (req: Request) => string };
  /** Parses a JSON body (content type, size limit, storable text) after the role check. */
  readonly jsonBody?: boolean;
  /**
   * The documented operation, or the operations of a path that the document spells out per workflow
   * (one start path per workflow, each with its own input schema).
   */
  readonly openapi: RouteOperation | ((context: DocumentContext) => readonly DocumentedPath[]);
  /** Builds the handler once per app; it answers or throws (errors reach the problem handler). */
  readonly handler: (deps: Deps) => (req: Request, res: Response) => Promise<void>;
}

/** A route whatever its handler reads: enough to document and list it, not to mount it. */
export type AnyRouteDeclaration = RouteDeclaration<never>;

/** A concrete documented path of a route whose document is spelled out per workflow. */
export interface DocumentedPath extends RouteOperation {
  readonly path: string;
}

/** Declares a route (identity; it gives the value its type where it is written). */
export function defineRoute<Deps = ApiDeps>(route: RouteDeclaration<Deps>): RouteDeclaration<Deps> {
  return route;
}

/** `/v1/executions/{id}` → `/v1/executions/:id`. */
export function expressPath(path: string): string {
  return path.replaceAll(/\{([^}]+)\}/g, ":$1");
}

/** The middleware chain of a route, in the order every route keeps: audit, guard, body, handler. */
function routeHandlers(route: RouteDeclaration, deps: ApiDeps): RequestHandler[] {
  return [
    ...(route.audit ? [audited(deps, route.audit.action, route.audit.target)] : []),
    ...guard(deps.keys, route.permission),
    ...(route.jsonBody ? jsonBody(deps.settings.bodyLimitBytes) : []),
    handler(route.handler(deps)),
  ];
}

/** A router that serves `routes`, in their order. */
export function mountRoutes(deps: ApiDeps, routes: readonly RouteDeclaration[]): Router {
  const router = Router();
  for (const route of routes) router[route.method](expressPath(route.path), ...routeHandlers(route, deps));
  return router;
}

/** Documents `routes`, in their order, each with the 401/403 answers of its guard. */
export function registerRoutes(
  registry: OpenAPIRegistry,
  routes: readonly AnyRouteDeclaration[],
  context: DocumentContext,
): void {
  for (const route of routes) {
    const documented =
      typeof route.openapi === "function" ? route.openapi(context) : [{ ...route.openapi, path: route.path }];
    for (const { path, ...operation } of documented) {
      registry.registerPath({
        ...operation,
        method: route.method,
        path,
        responses: { ...authProblems(route.permission), ...operation.responses },
      });
    }
  }
}
