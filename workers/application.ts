import { assetPortsService } from "../flows/assets/asset-ports.js";
import { holderSnapshotsService } from "../flows/corporate-actions/holder-snapshot.js";
import { ALL_ACTIVITIES, ALL_WORKFLOWS } from "../flows/index.js";
import { organisationSystemsService } from "../flows/organisations/organisation-systems-port.js";
import { indexingScopeService } from "../flows/support/indexing-scope.js";
import { CHAIN_ENTITIES } from "../src/chain/nonce-entity.js";
import { provide } from "../src/engine/services.js";
import type { Application } from "../src/roles/application.js";
import { PgLedgerSnapshot } from "../src/store/pg-ledger-snapshot.js";
import { assetPorts } from "./assets.js";
import { pgIndexingScope } from "./indexing-scope.js";
import { organisationDeploymentsSchedule } from "./organisation-deployments-schedule.js";
import { pgOrganisationSystems } from "./organisation-systems.js";

/** This release's application: the flows, the chain boundary's keyed entities, the flows' services. */
export const application: Application = {
  workflows: ALL_WORKFLOWS,
  activities: ALL_ACTIVITIES,
  entities: CHAIN_ENTITIES,
  schedules: ({ config, services }) => [
    organisationDeploymentsSchedule(config.organisations.abandonedDeploymentsIntervalMs, services),
  ],
  services: (deps) => [
    provide(indexingScopeService, pgIndexingScope(deps.pool)),
    provide(organisationSystemsService, pgOrganisationSystems(deps.pool)),
    provide(assetPortsService, assetPorts(deps.config.assetTemplates, deps.pool)),
    provide(holderSnapshotsService, new PgLedgerSnapshot(deps.pool)),
  ],
};
