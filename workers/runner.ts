import type { RoleContext, RoleHandle } from "../src/roles/role-handle.js";
import { startRunnerRole } from "../src/roles/runner-role.js";
import { application } from "./application.js";

/** The runner role working on this release's workflows, activities, entities and schedules. */
export function startRunnerWorker(ctx: RoleContext): Promise<RoleHandle> {
  return startRunnerRole(ctx, application);
}
