import { assetPortsService } from "../flows/assets/ports.js";
import { holderSnapshotsService } from "../flows/corporate-actions/ports.js";
import { ALL_ACTIVITIES, ALL_WORKFLOWS } from "../flows/index.js";
import { organisationSystemsService } from "../flows/organisations/ports.js";
import { organisationDeploymentsSchedule } from "../flows/organisations/schedules/deployments-schedule.js";
import { PgOrganisationSystems } from "../flows/organisations/store/pg-organisation-systems.js";
import { indexingScopeService } from "../flows/support/indexing-scope.js";
import { CHAIN_ENTITIES } from "../src/chain/nonce-entity.js";
import { provide } from "../src/engine/services.js";
import { PgLedgerSnapshot } from "../src/ledger-index/store/snapshot.js";
import type { Application } from "../src/roles/application.js";
import { applicationRoutes } from "./api-routes.js";
import { assetPorts } from "./assets.js";
import { pgIndexingScope } from "./indexing-scope.js";

/**
 * This release's application: the flows, the chain boundary's keyed entities, the features' routes
 * and schedules, the flows' services.
 */
export const application: Application = {
  workflows: ALL_WORKFLOWS,
  activities: ALL_ACTIVITIES,
  entities: CHAIN_ENTITIES,
  routes: applicationRoutes,
  schedules: ({ config, services }) => [
    organisationDeploymentsSchedule(config.organisations.abandonedDeploymentsIntervalMs, services),
  ],
  services: (deps) => [
    provide(indexingScopeService, pgIndexingScope(deps.pool)),
    provide(organisationSystemsService, new PgOrganisationSystems(deps.pool)),
    provide(assetPortsService, assetPorts(deps.config.assetTemplates, deps.pool)),
    provide(holderSnapshotsService, new PgLedgerSnapshot(deps.pool)),
  ],
};
