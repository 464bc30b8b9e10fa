import { ALL_ACTIVITIES, ALL_WORKFLOWS } from "../flows/index.js";
import { CHAIN_ENTITIES } from "../src/chain/nonce-entity.js";
import type { Application } from "../src/roles/application.js";

/** This release's application: the flows, the chain boundary's keyed entities, no extra schedules. */
export const application: Application = {
  workflows: ALL_WORKFLOWS,
  activities: ALL_ACTIVITIES,
  entities: CHAIN_ENTITIES,
  schedules: () => [],
};
