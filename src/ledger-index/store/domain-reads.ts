import type { Pool } from "pg";
import { addressKey } from "../../values/address.js";
import type {
  AssetStatusRead,
  LedgerDomainReads,
  ObservationRead,
  PriceFeedRead,
  SettingRead,
} from "../ledger-reads.js";

/**
 * Reads of the price, asset-status and settings rows (docs/ledger-index.md, "Read model"). Latest
 * values are taken from the log rows at read time, the row with the highest (block, log index)
 * winning, so a rollback that deletes the newest rows restores the previous value by itself.
 * `throughBlock` (a removed contract's removal height) hides rows above it; null reads all.
 */
export class PgLedgerDomainReads implements LedgerDomainReads {
  constructor(private readonly pool: Pool) {}

  /** The feed and its latest observation up to `throughBlock`; null when its FeedCreated is not indexed. */
  async priceFeed(chainId: number, feed: string, throughBlock: bigint | null): Promise<PriceFeedRead | null> {
    const { rows } = await this.pool.query(
      `SELECT f.feed, f.asset, f.owner, f.decimals, f.block_number::text AS created,
              o.round_id::text, o.answer::text, o.updated_at::text, o.block_number::text AS obs_block, o.log_index
       FROM ledger_price_feeds f
       LEFT JOIN LATERAL (
         SELECT * FROM ledger_price_observations o
         WHERE o.chain_id = f.chain_id AND o.feed = f.feed AND ($3::bigint IS NULL OR o.block_number <= $3)
         ORDER BY o.block_number DESC, o.log_index DESC LIMIT 1) o ON true
       WHERE f.chain_id = $1 AND f.feed = $2 AND ($3::bigint IS NULL OR f.block_number <= $3)
       ORDER BY f.block_number, f.log_index LIMIT 1`,
      [chainId, addressKey(feed), throughBlock?.toString() ?? null],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      feed: r.feed,
      asset: r.asset,
      owner: r.owner,
      decimals: r.decimals,
      createdAtBlock: r.created,
      latest:
        r.round_id === null
          ? null
          : {
              roundId: r.round_id,
              answer: r.answer,
              updatedAt: r.updated_at,
              blockNumber: r.obs_block,
              logIndex: r.log_index,
            },
    };
  }

  /** The feed's observations up to `throughBlock`, newest first, at most `limit`. */
  async observations(
    chainId: number,
    feed: string,
    throughBlock: bigint | null,
    limit: number,
  ): Promise<ObservationRead[]> {
    const { rows } = await this.pool.query(
      // Output columns are renamed: ORDER BY would otherwise sort the text casts.
      `SELECT round_id::text, answer::text, updated_at::text, block_number::text AS height, log_index
       FROM ledger_price_observations
       WHERE chain_id = $1 AND feed = $2 AND ($3::bigint IS NULL OR block_number <= $3)
       ORDER BY block_number DESC, log_index DESC LIMIT $4`,
      [chainId, addressKey(feed), throughBlock?.toString() ?? null, limit],
    );
    return rows.map((r) => ({
      roundId: r.round_id,
      answer: r.answer,
      updatedAt: r.updated_at,
      blockNumber: r.height,
      logIndex: r.log_index,
    }));
  }

  /**
   * The asset's status for `orgId`: active when one of the organisation's live (not removed)
   * resolvers has set a staleness bound for it, with the latest such bound; paused when only a
   * live feed of the organisation names the asset; null when neither knows it.
   */
  async assetStatus(chainId: number, orgId: string, asset: string): Promise<AssetStatusRead | null> {
    const a = addressKey(asset);
    const { rows } = await this.pool.query(
      `WITH bounds AS (
         SELECT b.* FROM ledger_staleness_bounds b
         JOIN ledger_scope s ON s.chain_id = b.chain_id AND s.address = b.resolver AND s.kind = 'price-resolver'
           AND s.org_id = $3 AND s.removed_height IS NULL AND b.block_number >= s.added_height
         WHERE b.chain_id = $1 AND b.asset = $2
       ), latest AS (SELECT * FROM bounds ORDER BY block_number DESC, log_index DESC LIMIT 1)
       SELECT l.resolver, l.feed, l.max_age_seconds::text AS max_age, l.block_number::text AS bound_at,
              (SELECT min(block_number)::text FROM bounds WHERE resolver = l.resolver) AS active_since,
              EXISTS (SELECT 1 FROM ledger_price_feeds f
                      JOIN ledger_scope s ON s.chain_id = f.chain_id AND s.address = f.feed AND s.kind = 'price-feed'
                        AND s.org_id = $3 AND s.removed_height IS NULL
                      WHERE f.chain_id = $1 AND f.asset = $2) AS fed
       FROM (SELECT 1) one LEFT JOIN latest l ON true`,
      [chainId, a, orgId],
    );
    const r = rows[0];
    if (r.resolver === null && !r.fed) return null;
    return {
      asset: a,
      status: r.resolver === null ? "paused" : "active",
      resolver: r.resolver,
      feed: r.feed,
      maxAgeSeconds: r.max_age,
      activeSinceBlock: r.active_since,
      boundAtBlock: r.bound_at,
    };
  }

  /** Every key's latest value of a settings contract up to `throughBlock`, by key. */
  async settings(chainId: number, contract: string, throughBlock: bigint | null): Promise<SettingRead[]> {
    const { rows } = await this.pool.query(
      `SELECT DISTINCT ON (key) key, value, block_number::text AS height
       FROM ledger_setting_changes
       WHERE chain_id = $1 AND contract = $2 AND ($3::bigint IS NULL OR block_number <= $3)
       ORDER BY key, block_number DESC, log_index DESC`,
      [chainId, addressKey(contract), throughBlock?.toString() ?? null],
    );
    return rows.map((r) => ({ key: r.key, value: r.value, blockNumber: r.height }));
  }
}
