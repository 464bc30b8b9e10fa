import type { Pool } from "pg";
import type { IndexingScope, TrackedContract } from "../flows/support/indexing-scope.js";
import { PgLedgerScope } from "../src/ledger-index/store/scope.js";
import { sameAddress } from "../src/values/index.js";

/**
 * The flows' indexing scope over the Ledger Index's scope table. A removal of a contract no longer
 * tracked is a no-op, so a workflow step that removed it and then crashed before journaling
 * re-runs cleanly; a replacement whose old contract is gone only adds.
 */
export function pgIndexingScope(pool: Pool): IndexingScope {
  const scope = new PgLedgerScope(pool);
  const isLive = async (c: TrackedContract) =>
    (await scope.liveRows(c.chainId, c.orgId, c.kind)).some((row) => sameAddress(row.address, c.address));
  return {
    async add(contract, fromHeight) {
      await scope.add({ ...contract, fromHeight });
    },
    async remove(contract, atHeight) {
      if (await isLive(contract)) await scope.remove(contract, atHeight);
    },
    async replace(old, atHeight, replacement, fromHeight) {
      if (await isLive(old)) await scope.replace(old, atHeight, { ...replacement, fromHeight });
      else await scope.add({ ...replacement, fromHeight });
    },
    async live(chainId, orgId, kind) {
      return (await scope.liveRows(chainId, orgId, kind)).map((row) => ({
        chainId: row.chainId,
        orgId: row.orgId,
        address: row.address,
        kind: row.kind,
      }));
    },
  };
}
