import type { Pool } from "pg";
import type { TenorConfig } from "../config/schema.js";
import type { ExecutionStarting } from "./executions/start-answer.js";
import type { AnyRouteDeclaration, RouteDeclaration } from "./route.js";

/** A tag of the OpenAPI document. */
export interface OpenApiTag {
  readonly name: string;
  readonly description: string;
}

/** Routes listed under one tag of the document, in their order. */
export interface TaggedRoutes<Route = AnyRouteDeclaration> {
  readonly tag: OpenApiTag;
  readonly routes: readonly Route[];
}

/**
 * What the api hands an application's stores besides its pool: the means to start an execution of
 * the key's organisation (src/api/executions/start-answer.ts), and the process's configuration
 * (absent in an api built without one, as in-process tests build it).
 */
export interface RouteHost {
  readonly executions: ExecutionStarting;
  readonly config?: TenorConfig;
}

/**
 * Routes an application adds to the Platform API (`Application.routes`, src/roles/application.ts):
 * declared like the platform's, mounted next to them and documented in the same OpenAPI document
 * under their own tag. `routes` are what the document and the tests list; `overStores` gives the
 * same routes with the feature's stores built on the api's pool, as the api role mounts them, so the
 * API itself knows no application's tables and the document needs no database.
 */
export interface ApiRoutes extends TaggedRoutes {
  overStores(pool: Pool, host: RouteHost): TaggedRoutes<RouteDeclaration>;
}

/**
 * The routes of one application feature: `stores` builds what their handlers read (the composition
 * root's `new Pg…`, and what they need of the host), once per app.
 */
export function defineApiRoutes<Stores>(feature: {
  tag: OpenApiTag;
  stores: (pool: Pool, host: RouteHost) => Stores;
  routes: readonly RouteDeclaration<Stores>[];
}): ApiRoutes {
  return {
    tag: feature.tag,
    routes: feature.routes,
    overStores(pool, host) {
      const stores = feature.stores(pool, host);
      return {
        tag: feature.tag,
        routes: feature.routes.map((route) => ({ ...route, handler: () => route.handler(stores) })),
      };
    },
  };
}
