import { bindHolderSnapshots } from "../flows/corporate-actions/holder-snapshot.js";
import { ALL_ACTIVITIES, ALL_WORKFLOWS } from "../flows/index.js";
import { bindIndexingScope } from "../flows/support/indexing-scope.js";
import { CHAIN_ENTITIES } from "../src/chain/nonce-entity.js";
import type { Application } from "../src/roles/application.js";
import { PgLedgerSnapshot } from "../src/store/pg-ledger-snapshot.js";
import { pgIndexingScope } from "./indexing-scope.js";

/** This release's application: the flows, the chain boundary's keyed entities, the flows' runtime. */
export const application: Application = {
  workflows: ALL_WORKFLOWS,
  activities: ALL_ACTIVITIES,
  entities: CHAIN_ENTITIES,
  schedules: () => [],
  bindRuntime(deps) {
    const unbind = [
      bindIndexingScope(pgIndexingScope(deps.pool)),
      bindHolderSnapshots(new PgLedgerSnapshot(deps.pool)),
    ];
    return () => {
      for (const u of unbind) u();
    };
  },
};
