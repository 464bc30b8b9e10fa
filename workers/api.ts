import { startApiRole } from "../src/roles/api-role.js";
import type { RoleContext, RoleHandle } from "../src/roles/role-handle.js";
import { application } from "./application.js";

/** The api role with this release's workflows: their schemas validate the API's inputs. */
export function startApiWorker(ctx: RoleContext): Promise<RoleHandle> {
  return startApiRole(ctx, application);
}
