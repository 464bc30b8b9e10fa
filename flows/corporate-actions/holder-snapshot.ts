import { TenorError } from "../../src/errors/tenor-error.js";
import { CORPORATE_ACTION_ERRORS } from "./errors.js";

/**
 * What a corporate action reads from the Ledger Index: a token's holders at the record height
 * (docs/corporate-actions.md). A port, like flows/support/indexing-scope.ts: the runner's
 * composition root (workers/application.ts) binds it over the index's store before it takes work.
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

let bound: HolderSnapshotSource | undefined;

/** Bound by the runner's composition root before it takes work; returns the unbinding. */
export function bindHolderSnapshots(source: HolderSnapshotSource): () => void {
  bound = source;
  return () => {
    if (bound === source) bound = undefined;
  };
}

export function holderSnapshots(): HolderSnapshotSource {
  if (!bound) {
    // Retryable: the execution suspends and resumes on a runner that has it bound.
    throw new TenorError(
      CORPORATE_ACTION_ERRORS.HOLDER_SNAPSHOT_MISSING,
      "this process has no holder snapshot source bound (runner role only)",
      { retryable: true },
    );
  }
  return bound;
}
