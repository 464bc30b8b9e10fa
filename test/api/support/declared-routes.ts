import { API_ROUTES } from "../../../src/api/api-routes.js";
import type { AnyRouteDeclaration } from "../../../src/api/route.js";
import { applicationRoutes } from "../../../workers/api-routes.js";

/** Every declared `/v1` route the api serves: the platform's, then the application's (workers/api-routes.ts). */
export const DECLARED_ROUTES: readonly AnyRouteDeclaration[] = [
  ...API_ROUTES,
  ...applicationRoutes.flatMap((feature) => feature.routes),
];
