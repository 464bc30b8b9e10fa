import { ASSET_ROUTES, ASSETS_TAG } from "../flows/assets/api/routes.js";
import { ORGANISATION_ROUTES, ORGANISATIONS_TAG } from "../flows/organisations/api/routes.js";
import { PgOrganisationSystems } from "../flows/organisations/store/pg-organisation-systems.js";
import { type ApiRoutes, defineApiRoutes } from "../src/api/application-routes.js";
import { assetPorts } from "./assets.js";

/**
 * The application's routes on the Platform API, each over the store of its feature built on the
 * api's pool. Their order is the OpenAPI document's.
 */
export const applicationRoutes: readonly ApiRoutes[] = [
  defineApiRoutes({
    tag: ORGANISATIONS_TAG,
    stores: (pool) => ({ systems: new PgOrganisationSystems(pool) }),
    routes: ORGANISATION_ROUTES,
  }),
  defineApiRoutes({
    tag: ASSETS_TAG,
    stores: (pool, host) => {
      const ports = assetPorts(host.config?.assetTemplates ?? [], pool);
      return { assets: ports.registry, templates: ports.templates, executions: host.executions };
    },
    routes: ASSET_ROUTES,
  }),
];
