import { LEDGER_INDEX_ERRORS } from "../../errors/ledger-index-errors.js";
import { TenorError } from "../../errors/tenor-error.js";
import type { LedgerScopeKind, LedgerScopeReads, ScopeRow } from "../../ledger-index/ledger-scope.js";

/**
 * The organisation's newest scope row for a contract of `kind` (live, or removed: a removed one
 * answers as of its removal height). Another organisation's tracking is invisible.
 *
 * @throws TenorError LEDGER_SCOPE_NOT_FOUND (404) when the organisation never tracked it.
 */
export async function trackedContract(
  scope: LedgerScopeReads,
  where: { chainId: number; orgId: string; address: string; kind: LedgerScopeKind },
): Promise<ScopeRow> {
  const row = (await scope.rowsFor(where.chainId, where.orgId, where.address)).find(
    (r) => r.kind === where.kind,
  );
  if (row) return row;
  throw new TenorError(
    LEDGER_INDEX_ERRORS.LEDGER_SCOPE_NOT_FOUND,
    `${where.kind} contract ${where.address} is not tracked on chain ${where.chainId} by this organisation`,
    { details: { chainId: where.chainId, address: where.address, kind: where.kind } },
  );
}

/** The scope row's heights as the read resources show them. */
export function trackingOf(row: ScopeRow): { addedHeight: string; removedHeight: string | null } {
  return {
    addedHeight: row.addedHeight.toString(),
    removedHeight: row.removedHeight === null ? null : row.removedHeight.toString(),
  };
}
