import type { Pool } from "pg";
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
 * Routes an application adds to the Platform API (`Application.routes`, src/roles/application.ts):
 * declared like the platform's, mounted next to them and documented in the same OpenAPI document
 * under their own tag. `routes` are what the document and the tests list; `overStores` gives the
 * same routes with the feature's stores built on the api's pool, as the api role mounts them, so the
 * API itself knows no application's tables and the document needs no database.
 */
export interface ApiRoutes extends TaggedRoutes {
  overStores(pool: Pool): TaggedRoutes<RouteDeclaration>;
}

/**
 * The routes of one application feature: `stores` builds what their handlers read (the composition
 * root's `new Pg…`), once per app.
 */
export function defineApiRoutes<Stores>(feature: {
  tag: OpenApiTag;
  stores: (pool: Pool) => Stores;
  routes: readonly RouteDeclaration<Stores>[];
}): ApiRoutes {
  return {
    tag: feature.tag,
    routes: feature.routes,
    overStores(pool) {
      const stores = feature.stores(pool);
      return {
        tag: feature.tag,
        routes: feature.routes.map((route) => ({ ...route, handler: () => route.handler(stores) })),
      };
    },
  };
}
