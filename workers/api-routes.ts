import { ASSETS_TAG, assetsRouter, registerAssetsOpenApi } from "../flows/assets/api/routes.js";
import { PgAssets } from "../flows/assets/store/pg-assets.js";
import {
  ORGANISATIONS_TAG,
  organisationsRouter,
  registerOrganisationsOpenApi,
} from "../flows/organisations/api/routes.js";
import { PgOrganisationSystems } from "../flows/organisations/store/pg-organisation-systems.js";
import type { ApiRoutes } from "../src/api/api-deps.js";

/**
 * The application's routes on the Platform API, each over the store of its feature built on the
 * api's pool. Their order is the OpenAPI document's.
 */
export const applicationRoutes: readonly ApiRoutes[] = [
  {
    tag: ORGANISATIONS_TAG,
    registerOpenApi: registerOrganisationsOpenApi,
    router: (deps) => organisationsRouter(deps, new PgOrganisationSystems(deps.pool)),
  },
  {
    tag: ASSETS_TAG,
    registerOpenApi: registerAssetsOpenApi,
    router: (deps) => assetsRouter(deps, new PgAssets(deps.pool)),
  },
];
