import type { Pool } from "pg";
import type {
  OrganisationSystem,
  OrganisationSystems,
} from "../flows/organisations/organisation-systems-port.js";
import { type OrganisationSystemRow, PgOrganisationSystems } from "../src/store/pg-organisation-systems.js";

/** The organisation flows' systems store over `organisation_systems` (src/store/pg-organisation-systems.ts). */
export function pgOrganisationSystems(pool: Pool): OrganisationSystems {
  const store = new PgOrganisationSystems(pool);
  return {
    async register(entry) {
      const result = await store.register(entry);
      return result.registered
        ? { registered: true, system: toSystem(result.row) }
        : { registered: false, blockedBy: toSystem(result.blockedBy) };
    },
    async deployment(executionId) {
      const row = await store.find(executionId);
      return row ? toSystem(row) : null;
    },
    async active(orgId, chainId) {
      const row = await store.active(orgId, chainId);
      return row ? toSystem(row) : null;
    },
    async activate(executionId, replacedAtHeight) {
      const result = await store.activate(executionId, replacedAtHeight);
      return result.activated
        ? {
            activated: true,
            system: toSystem(result.row),
            replaced: result.replaced ? toSystem(result.replaced) : null,
          }
        : { activated: false, system: toSystem(result.row) };
    },
    async abandoned(limit) {
      return (await store.abandoned(limit)).map((a) => ({
        system: toSystem(a.row),
        reason: a.reason,
        failureCode: a.failureCode,
      }));
    },
    async markFailed(executionId, removedHeight, reason) {
      const row = await store.markFailed(executionId, removedHeight, reason);
      return row ? toSystem(row) : null;
    },
  };
}

function toSystem(row: OrganisationSystemRow): OrganisationSystem {
  return {
    orgId: row.orgId,
    chainId: row.chainId,
    address: row.address,
    executionId: row.executionId,
    status: row.status,
    fromHeight: row.fromHeight,
    removedHeight: row.removedHeight,
  };
}
