import type { Pool, PoolClient } from "pg";
import { LEDGER_INDEX_ERRORS } from "../../errors/ledger-index-errors.js";
import { TenorError } from "../../errors/tenor-error.js";
import { withTransaction } from "../../store/with-transaction.js";
import { addressKey } from "../../values/address.js";
import {
  LEDGER_SCOPE_KINDS,
  type LedgerScopeKind,
  type LedgerScopeTracking,
  type ScopeEntry,
  type ScopeRow,
} from "../ledger-scope.js";

const ADDRESS = /^0x[0-9a-f]{40}$/;

/**
 * The indexing scope (docs/ledger-index.md, "Scope"). Every change commits before this resolves,
 * and ingest re-reads the scope inside each write transaction, so a change is durable before it
 * takes effect. Removals set `removed_height` and keep the row.
 */
export class PgLedgerScope implements LedgerScopeTracking {
  constructor(private readonly pool: Pool) {}

  /** Starts tracking `entry`; returns the existing live row when the organisation already tracks it. */
  async add(entry: ScopeEntry): Promise<ScopeRow> {
    return (await this.track(entry)).row;
  }

  /** Starts tracking `entry`; `added` is false when the organisation already tracks it (the live row, unchanged). */
  async track(entry: ScopeEntry): Promise<{ row: ScopeRow; added: boolean }> {
    return withTransaction(this.pool, (client) => addIn(client, entry));
  }

  /**
   * Stops tracking at `atHeight` (inclusive: logs up to it stay, none above it are taken again).
   * @throws TenorError LEDGER_SCOPE_NOT_FOUND when no live row matches.
   */
  async remove(entry: Omit<ScopeEntry, "fromHeight">, atHeight: bigint): Promise<ScopeRow> {
    return withTransaction(this.pool, (client) => removeIn(client, entry, atHeight));
  }

  /** A removal and its replacement in one transaction: the index never tracks both or neither. */
  async replace(
    old: Omit<ScopeEntry, "fromHeight">,
    atHeight: bigint,
    replacement: ScopeEntry,
  ): Promise<{ removed: ScopeRow; added: ScopeRow }> {
    return withTransaction(this.pool, async (client) => ({
      removed: await removeIn(client, old, atHeight),
      added: (await addIn(client, replacement)).row,
    }));
  }

  /** The organisation's rows for one contract, newest first (live and removed). */
  async rowsFor(chainId: number, orgId: string, address: string): Promise<ScopeRow[]> {
    const { rows } = await this.pool.query(
      `SELECT ${COLUMNS} FROM ledger_scope WHERE chain_id = $1 AND org_id = $2 AND address = $3 ORDER BY id DESC`,
      [chainId, orgId, normalise(address)],
    );
    return rows.map(toRow);
  }

  /** The organisation's live rows on `chainId` (of `kind` when given), oldest first. */
  async liveRows(chainId: number, orgId: string, kind?: LedgerScopeKind): Promise<ScopeRow[]> {
    const { rows } = await this.pool.query(
      `SELECT ${COLUMNS} FROM ledger_scope
       WHERE chain_id = $1 AND org_id = $2 AND removed_height IS NULL AND ($3::text IS NULL OR kind = $3)
       ORDER BY id`,
      [chainId, orgId, kind ?? null],
    );
    return rows.map(toRow);
  }

  /** Rows of `chainId` still relevant at or above `height` (live, or removed at or above it). */
  async activeFrom(chainId: number, height: bigint): Promise<ScopeRow[]> {
    const { rows } = await this.pool.query(
      `SELECT ${COLUMNS} FROM ledger_scope
       WHERE chain_id = $1 AND (removed_height IS NULL OR removed_height >= $2) ORDER BY id`,
      [chainId, height.toString()],
    );
    return rows.map(toRow);
  }
}

const COLUMNS = `id::text, chain_id, org_id, address, kind, added_height::text, removed_height::text`;

function toRow(r: Record<string, string | number | null>): ScopeRow {
  return {
    id: r.id as string,
    chainId: Number(r.chain_id),
    orgId: r.org_id as string,
    address: r.address as string,
    kind: r.kind as LedgerScopeKind,
    addedHeight: BigInt(r.added_height as string),
    removedHeight: r.removed_height === null ? null : BigInt(r.removed_height as string),
  };
}

function normalise(address: string): string {
  const lower = addressKey(address);
  if (!ADDRESS.test(lower))
    throw new TenorError(
      LEDGER_INDEX_ERRORS.LEDGER_SCOPE_INVALID,
      `address = ${address}: must be 0x + 40 hex digits`,
      {
        details: { field: "address", value: address },
      },
    );
  return lower;
}

function validate(entry: Omit<ScopeEntry, "fromHeight">): void {
  if (!LEDGER_SCOPE_KINDS.includes(entry.kind))
    throw new TenorError(
      LEDGER_INDEX_ERRORS.LEDGER_SCOPE_INVALID,
      `kind = ${entry.kind}: must be one of ${LEDGER_SCOPE_KINDS.join(", ")}`,
      { details: { field: "kind", value: entry.kind } },
    );
  if (!Number.isInteger(entry.chainId) || entry.chainId < 1)
    throw new TenorError(
      LEDGER_INDEX_ERRORS.LEDGER_SCOPE_INVALID,
      `chainId = ${entry.chainId}: must be an integer ≥ 1`,
      {
        details: { field: "chainId", value: entry.chainId },
      },
    );
  if (entry.orgId.length === 0)
    throw new TenorError(LEDGER_INDEX_ERRORS.LEDGER_SCOPE_INVALID, "orgId is required", {
      details: { field: "orgId" },
    });
}

async function addIn(client: PoolClient, entry: ScopeEntry): Promise<{ row: ScopeRow; added: boolean }> {
  validate(entry);
  if (entry.fromHeight < 0n)
    throw new TenorError(
      LEDGER_INDEX_ERRORS.LEDGER_SCOPE_INVALID,
      `fromHeight = ${entry.fromHeight}: must be ≥ 0`,
      {
        details: { field: "fromHeight", value: entry.fromHeight.toString() },
      },
    );
  const address = normalise(entry.address);
  // One live row per (chain, org, address, kind): serialise adds of the same key.
  await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 746003))", [
    `${entry.chainId}:${entry.orgId}:${address}:${entry.kind}`,
  ]);
  const live = await client.query(
    `SELECT ${COLUMNS} FROM ledger_scope
     WHERE chain_id = $1 AND org_id = $2 AND address = $3 AND kind = $4 AND removed_height IS NULL`,
    [entry.chainId, entry.orgId, address, entry.kind],
  );
  if (live.rows[0]) return { row: toRow(live.rows[0]), added: false };
  const { rows } = await client.query(
    `INSERT INTO ledger_scope (chain_id, org_id, address, kind, added_height) VALUES ($1, $2, $3, $4, $5)
     RETURNING ${COLUMNS}`,
    [entry.chainId, entry.orgId, address, entry.kind, entry.fromHeight.toString()],
  );
  return { row: toRow(rows[0]), added: true };
}

async function removeIn(
  client: PoolClient,
  entry: Omit<ScopeEntry, "fromHeight">,
  atHeight: bigint,
): Promise<ScopeRow> {
  validate(entry);
  const address = normalise(entry.address);
  const { rows } = await client.query(
    `UPDATE ledger_scope SET removed_height = GREATEST($5::bigint, added_height - 1), removed_at = now()
     WHERE chain_id = $1 AND org_id = $2 AND address = $3 AND kind = $4 AND removed_height IS NULL
     RETURNING ${COLUMNS}`,
    [entry.chainId, entry.orgId, address, entry.kind, atHeight.toString()],
  );
  if (!rows[0])
    throw new TenorError(
      LEDGER_INDEX_ERRORS.LEDGER_SCOPE_NOT_FOUND,
      `organisation ${entry.orgId} does not track ${address} (${entry.kind}) on chain ${entry.chainId}`,
      { details: { chainId: entry.chainId, address, kind: entry.kind } },
    );
  return toRow(rows[0]);
}
