import type { Pool, PoolClient } from "pg";
import { TenorError } from "../../../src/errors/tenor-error.js";
import { withTransaction } from "../../../src/store/with-transaction.js";
import type { AssetRecord, NewAsset } from "../asset-record.js";
import type { AssetClaim, AssetProgress, AssetRegistry } from "../ports.js";

/**
 * The assets read model (docs/assets.md): one row per (organisation, template, symbol), written
 * only by the creation execution that owns it. Every write names the organisation and the owning
 * execution, so neither another tenant nor a superseded creation can change a row.
 */

/** What {@link PgAssets.list} selects; every filter but the organisation is optional. */
export interface AssetListFilter {
  orgId: string;
  status?: AssetRecord["status"];
  chainId?: number;
  templateId?: string;
  /** Page strictly after this (createdAt, id): newest first. */
  after?: { createdAt: string; id: string };
  limit: number;
}

/** Thrown when a write names an execution that no longer owns the asset. */
export const ASSET_NOT_OWNED = "ASSET_NOT_OWNED";

declare module "../../../src/errors/error-code-registry.js" {
  interface ErrorCodeRegistry {
    assetStore: typeof ASSET_NOT_OWNED;
  }
}

const COLUMNS = `id, org_id, template_id, symbol, name, kind, chain_id, execution_id, status, token, feed,
  resolver, hashes, created_at, activated_at`;

export class PgAssets implements AssetRegistry {
  constructor(private readonly pool: Pool) {}

  /**
   * Inserts the row unless (org, template, symbol) has one, then reports its owner. A row whose
   * owning execution failed passes to `asset.executionId` (the same asset continues); one whose
   * owner is alive or finished stays with it.
   */
  async claim(asset: NewAsset): Promise<AssetClaim> {
    return withTransaction(this.pool, async (client) => {
      await client.query(
        `INSERT INTO assets (id, org_id, template_id, symbol, name, kind, chain_id, execution_id, resolver)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (org_id, template_id, symbol) DO NOTHING`,
        [
          asset.id,
          asset.orgId,
          asset.templateId,
          asset.symbol,
          asset.name,
          asset.kind,
          asset.chainId,
          asset.executionId,
          asset.resolver,
        ],
      );
      // Lock the row so two claims of one asset decide one after the other.
      const { rows } = await client.query(
        `SELECT ${COLUMNS} FROM assets WHERE org_id = $1 AND template_id = $2 AND symbol = $3 FOR UPDATE`,
        [asset.orgId, asset.templateId, asset.symbol],
      );
      const row = toRow(rows[0]);
      if (row.executionId === asset.executionId) return { outcome: "claimed", asset: row };
      const ownerStatus = await executionStatus(client, row.executionId);
      if (ownerStatus !== "failed") return { outcome: "held", asset: row, ownerStatus };
      const { rows: taken } = await client.query(
        `UPDATE assets SET execution_id = $2, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
        [row.id, asset.executionId],
      );
      return { outcome: "taken-over", asset: toRow(taken[0]) };
    });
  }

  /** Sets token and feed when given, and appends `hash` unless its step is already listed. */
  async record(
    orgId: string,
    id: string,
    executionId: string,
    progress: AssetProgress,
  ): Promise<AssetRecord> {
    const hash = progress.hash ? JSON.stringify([progress.hash]) : null;
    const step = progress.hash ? JSON.stringify([{ step: progress.hash.step }]) : null;
    const { rows } = await this.pool.query(
      `UPDATE assets SET
         token = COALESCE($4, token),
         feed = COALESCE($5, feed),
         hashes = CASE WHEN $6::jsonb IS NULL OR hashes @> $7::jsonb THEN hashes ELSE hashes || $6::jsonb END,
         updated_at = now()
       WHERE org_id = $1 AND id = $2 AND execution_id = $3
       RETURNING ${COLUMNS}`,
      [orgId, id, executionId, progress.token ?? null, progress.feed ?? null, hash, step],
    );
    if (rows.length === 0) throw notOwned(orgId, id, executionId);
    return toRow(rows[0]);
  }

  /** paused → active, once: `activated` is false when the row was already active. */
  async activate(
    orgId: string,
    id: string,
    executionId: string,
  ): Promise<{ activated: boolean; asset: AssetRecord }> {
    const { rows } = await this.pool.query(
      `UPDATE assets SET status = 'active', activated_at = now(), updated_at = now()
       WHERE org_id = $1 AND id = $2 AND execution_id = $3 AND status = 'paused'
       RETURNING ${COLUMNS}`,
      [orgId, id, executionId],
    );
    if (rows.length > 0) return { activated: true, asset: toRow(rows[0]) };
    const current = await this.get(orgId, id);
    if (!current || current.executionId !== executionId) throw notOwned(orgId, id, executionId);
    return { activated: false, asset: current };
  }

  /** The organisation's asset with this id, or undefined (another organisation's is not found). */
  async get(orgId: string, id: string): Promise<AssetRecord | undefined> {
    const { rows } = await this.pool.query(`SELECT ${COLUMNS} FROM assets WHERE org_id = $1 AND id = $2`, [
      orgId,
      id,
    ]);
    return rows[0] ? toRow(rows[0]) : undefined;
  }

  /**
   * The organisation's assets, newest first (`created_at`, then `id`, descending), filtered, at most
   * `limit` rows, strictly after `filter.after` when given: keyset pages on the
   * (org_id, created_at, id) index, so a page costs the same however deep it is.
   */
  async list(filter: AssetListFilter): Promise<AssetRecord[]> {
    const where = ["org_id = $1"];
    const values: unknown[] = [filter.orgId];
    const add = (clause: (p: string) => string, value: unknown) => {
      values.push(value);
      where.push(clause(`$${values.length}`));
    };
    if (filter.status !== undefined) add((p) => `status = ${p}`, filter.status);
    if (filter.chainId !== undefined) add((p) => `chain_id = ${p}`, filter.chainId);
    if (filter.templateId !== undefined) add((p) => `template_id = ${p}`, filter.templateId);
    if (filter.after !== undefined) {
      values.push(filter.after.createdAt, filter.after.id);
      where.push(`(created_at, id) < ($${values.length - 1}::timestamptz, $${values.length})`);
    }
    values.push(filter.limit);
    const { rows } = await this.pool.query(
      `SELECT ${COLUMNS} FROM assets WHERE ${where.join(" AND ")}
       ORDER BY created_at DESC, id DESC LIMIT $${values.length}`,
      values,
    );
    return rows.map(toRow);
  }
}

async function executionStatus(client: PoolClient, executionId: string): Promise<string> {
  const { rows } = await client.query("SELECT status FROM executions WHERE id = $1::uuid", [executionId]);
  return (rows[0]?.status as string | undefined) ?? "unknown";
}

function notOwned(orgId: string, id: string, executionId: string): TenorError {
  return new TenorError(ASSET_NOT_OWNED, `asset ${id} is no longer owned by execution ${executionId}`, {
    details: { orgId, assetId: id, executionId },
  });
}

// biome-ignore lint/suspicious/noExplicitAny: a pg result row.
function toRow(r: any): AssetRecord {
  return {
    id: r.id,
    orgId: r.org_id,
    templateId: r.template_id,
    symbol: r.symbol,
    name: r.name,
    kind: r.kind,
    chainId: r.chain_id,
    executionId: r.execution_id,
    status: r.status,
    token: r.token,
    feed: r.feed,
    resolver: r.resolver,
    hashes: r.hashes,
    createdAt: (r.created_at as Date).toISOString(),
    activatedAt: r.activated_at ? (r.activated_at as Date).toISOString() : null,
  };
}
