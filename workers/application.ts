import { bindAssetPorts } from "../flows/assets/asset-ports.js";
import { bindHolderSnapshots } from "../flows/corporate-actions/holder-snapshot.js";
import { ALL_ACTIVITIES, ALL_WORKFLOWS } from "../flows/index.js";
import { bindOrganisationSystems } from "../flows/organisations/organisation-systems-port.js";
import { bindIndexingScope } from "../flows/support/indexing-scope.js";
import { CHAIN_ENTITIES } from "../src/chain/nonce-entity.js";
import { PgLedgerSnapshot } from "../src/ledger-index/store/snapshot.js";
import type { Application } from "../src/roles/application.js";
import { assetPorts } from "./assets.js";
import { pgIndexingScope } from "./indexing-scope.js";
import { organisationDeploymentsSchedule } from "./organisation-deployments-schedule.js";
import { pgOrganisationSystems } from "./organisation-systems.js";

/** This release's application: the flows, the chain boundary's keyed entities, the flows' runtime. */
export const application: Application = {
  workflows: ALL_WORKFLOWS,
  activities: ALL_ACTIVITIES,
  entities: CHAIN_ENTITIES,
  schedules: ({ config }) => [
    organisationDeploymentsSchedule(config.organisations.abandonedDeploymentsIntervalMs),
  ],
  bindRuntime(deps) {
    const unbind = [
      bindIndexingScope(pgIndexingScope(deps.pool)),
      bindOrganisationSystems(pgOrganisationSystems(deps.pool)),
      bindAssetPorts(assetPorts(deps.config.assetTemplates, deps.pool)),
      bindHolderSnapshots(new PgLedgerSnapshot(deps.pool)),
    ];
    return () => {
      for (const u of unbind) u();
    };
  },
};
