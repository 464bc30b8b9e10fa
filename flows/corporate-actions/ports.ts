import { defineService } from "../../src/engine/services.js";

/**
 * What a corporate action reads from the Ledger Index: a token's holders at the record height
 * (docs/corporate-actions.md). A service, like flows/support/indexing-scope.ts: the runner's
 * composition root (workers/application.ts) provides it over the index's store.
 */
export interface HolderSnapshotQuery {
  chainId: number;
  /** Always the execution's organisation: only a token it tracks is read. */
  orgId: string;
  token: string;
  height: bigint;
}

export interface HolderSnapshotSource {
  /**
   * `tracked: false` when the organisation did not track the token at the height; otherwise the
   * holders with a positive balance (base units, decimal strings), in address order.
   */
  holdersAt(
    query: HolderSnapshotQuery,
  ): Promise<{ tracked: boolean; holders: { holder: string; balance: string }[] }>;
}

export const holderSnapshotsService = defineService<HolderSnapshotSource>(
  "corporate-actions.holder-snapshots",
);
