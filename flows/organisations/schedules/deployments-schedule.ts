import type { ScheduleDefinition } from "../../../src/schedules/schedule-definition.js";
import { releaseAbandonedDeployments } from "../abandoned-deployments.js";

/** The failed-deployment schedule's name: its job scheduler id and its `schedules` row. */
export const ORGANISATION_DEPLOYMENTS_SCHEDULE = "organisation-deployments";

/**
 * Every `organisations.abandonedDeploymentsIntervalMs`: declares failed the organisation
 * deployments whose execution failed or is gone and takes their systems out of the indexing scope
 * (docs/organisations.md, "Abandoned deployments"). Idempotent on its window: a second run finds
 * nothing left to do. Needs the runner's bound ports (organisation systems, indexing scope, chain).
 */
export function organisationDeploymentsSchedule(intervalMs: number): ScheduleDefinition {
  return {
    name: ORGANISATION_DEPLOYMENTS_SCHEDULE,
    cadence: { kind: "every", everyMs: intervalMs },
    async run({ logger }) {
      const report = await releaseAbandonedDeployments(logger.child({ component: "runner" }));
      const summary = { ...report };
      if (report.errors > 0 && report.failed + report.released === 0)
        return { outcome: "failed", summary, error: `${report.errors} abandoned deployment(s) not settled` };
      return { outcome: report.failed + report.released > 0 ? "succeeded" : "empty", summary };
    },
  };
}
