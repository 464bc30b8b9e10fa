import { startIndexerRole } from "../src/roles/indexer-role.js";
import type { RoleContext, RoleHandle } from "../src/roles/role-handle.js";

/** The indexer role: it runs no workflow code, so it needs nothing from the application. */
export function startIndexerWorker(ctx: RoleContext): Promise<RoleHandle> {
  return startIndexerRole(ctx);
}
