import { type ServiceSet, serviceLookup } from "../../../src/engine/services.js";
import type { ScheduleDefinition } from "../../../src/schedules/schedule-definition.js";
import { ABANDONED_DEPLOYMENT_SERVICES, releaseAbandonedDeployments } from "../abandoned-deployments.js";

/** The failed-deployment schedule's name: its job scheduler id and its `schedules` row. */
export const ORGANISATION_DEPLOYMENTS_SCHEDULE = "organisation-deployments";

/**
 * Every `organisations.abandonedDeploymentsIntervalMs`: declares failed the organisation
 * deployments whose execution failed or is gone and takes their systems out of the indexing scope
 * (docs/organisations.md, "Abandoned deployments"). Idempotent on its window: a second run finds
 * nothing left to do. Reaches the runner's services (organisation systems, indexing scope, chain):
 * built without one of them, it refuses, as a runner does for a workflow.
 */
export function organisationDeploymentsSchedule(
  intervalMs: number,
  services: ServiceSet,
): ScheduleDefinition {
  const user = {
    kind: "schedule",
    name: ORGANISATION_DEPLOYMENTS_SCHEDULE,
    services: ABANDONED_DEPLOYMENT_SERVICES,
  };
  services.assertProvides([user]);
  const lookup = serviceLookup("schedule", user, services);
  return {
    name: ORGANISATION_DEPLOYMENTS_SCHEDULE,
    cadence: { kind: "every", everyMs: intervalMs },
    async run({ logger }) {
      const report = await releaseAbandonedDeployments(lookup, logger.child({ component: "runner" }));
      const summary = { ...report };
      if (report.errors > 0 && report.failed + report.released === 0)
        return { outcome: "failed", summary, error: `${report.errors} abandoned deployment(s) not settled` };
      return { outcome: report.failed + report.released > 0 ? "succeeded" : "empty", summary };
    },
  };
}
