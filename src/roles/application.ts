import type { ApiRoutes } from "../api/application-routes.js";
import type { AnyActivity } from "../engine/activity.js";
import type { ExecutionClient } from "../engine/execution-client.js";
import type { ServiceProvision, ServiceSet } from "../engine/services.js";
import type { AnyWorkflow } from "../engine/workflow.js";
import type { AnyEntity } from "../keyed/entity.js";
import type { RunnerScheduleDependencies } from "../schedules/runner-schedules.js";
import type { ScheduleDefinition } from "../schedules/schedule-definition.js";

/**
 * What an application built on Tenor hands the roles: its workflows, activities, keyed entities,
 * API routes and schedules. The roles are the engine's host and know no application; the composition root
 * (`workers/`) builds this from `flows/` and passes it down (docs/architecture.md).
 */
export interface Application {
  readonly workflows: readonly AnyWorkflow[];
  readonly activities: readonly AnyActivity[];
  readonly entities: readonly AnyEntity[];
  /**
   * The application's own Platform API routes, mounted and documented by the api role next to the
   * platform's. Unset: the application adds none.
   */
  readonly routes?: readonly ApiRoutes[];
  /**
   * The application's own schedules, next to the runner's built-in ones (sweep, rollups,
   * retention, chain health). Built once per runner start, with the runner's connections and
   * every service the runner provides (the host's and the application's).
   */
  readonly schedules: (
    deps: RunnerScheduleDependencies & { services: ServiceSet },
  ) => readonly ScheduleDefinition[];
  /**
   * The services the application's workflows and activities reach outside the journal (its read
   * models, its stores), built once per runner from its connections; they join the host's own
   * (the chain access, the index's heights) in the runner's ServiceSet (src/engine/services.ts).
   * Unset: the application provides none.
   */
  readonly services?: (deps: ApplicationRuntimeDependencies) => readonly ServiceProvision[];
}

/** The runner's connections an application's services are built over. */
export interface ApplicationRuntimeDependencies {
  config: RunnerScheduleDependencies["config"];
  pool: RunnerScheduleDependencies["pool"];
  redis: RunnerScheduleDependencies["redis"];
  logger: RunnerScheduleDependencies["logger"];
  executions: ExecutionClient;
}
