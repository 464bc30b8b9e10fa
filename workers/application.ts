import { bindAssetPorts } from "../flows/assets/asset-ports.js";
import { bindHolderSnapshots } from "../flows/corporate-actions/holder-snapshot.js";
import { ALL_ACTIVITIES, ALL_WORKFLOWS } from "../flows/index.js";
import { bindOrganisationSystems } from "../flows/organisations/organisation-systems-port.js";
import { organisationDeploymentsSchedule } from "../flows/organisations/schedules/deployments-schedule.js";
import { PgOrganisationSystems } from "../flows/organisations/store/pg-organisation-systems.js";
import { bindIndexingScope } from "../flows/support/indexing-scope.js";
import { CHAIN_ENTITIES } from "../src/chain/nonce-entity.js";
import { PgLedgerSnapshot } from "../src/ledger-index/store/snapshot.js";
import type { Application } from "../src/roles/application.js";
import { applicationRoutes } from "./api-routes.js";
import { assetPorts } from "./assets.js";
import { pgIndexingScope } from "./indexing-scope.js";

/**
 * This release's application: the flows, the chain boundary's keyed entities, the features' routes
 * and schedules, the flows' runtime.
 */
export const application: Application = {
  workflows: ALL_WORKFLOWS,
  activities: ALL_ACTIVITIES,
  entities: CHAIN_ENTITIES,
  routes: applicationRoutes,
  schedules: ({ config }) => [
    organisationDeploymentsSchedule(config.organisations.abandonedDeploymentsIntervalMs),
  ],
  bindRuntime(deps) {
    const unbind = [
      bindIndexingScope(pgIndexingScope(deps.pool)),
      bindOrganisationSystems(new PgOrganisationSystems(deps.pool)),
      bindAssetPorts(assetPorts(deps.config.assetTemplates, deps.pool)),
      bindHolderSnapshots(new PgLedgerSnapshot(deps.pool)),
    ];
    return () => {
      for (const u of unbind) u();
    };
  },
};
