import type { PoolClient } from "pg";
import { type Erc20TransferLog, insertTransfers } from "./transfers.js";

/** Where a log came from: its key (chain, block, log index) and the block it belongs to. Addresses lowercase. */
export interface LogOrigin {
  blockNumber: bigint;
  logIndex: number;
  blockHash: string;
  txHash: string;
}

/** `FeedCreated(asset, owner, decimals)`, emitted by a price feed's constructor. */
export interface FeedCreatedLog extends LogOrigin {
  feed: string;
  asset: string;
  owner: string;
  decimals: number;
}

/** `ObservationSubmitted(roundId, answer, updatedAt)` of a price feed. */
export interface ObservationLog extends LogOrigin {
  feed: string;
  roundId: bigint;
  answer: bigint;
  /** The feed's timestamp, seconds since the epoch. */
  updatedAt: bigint;
}

/** `StalenessBoundSet(asset, feed, maxAgeSeconds)` of a price resolver. */
export interface StalenessBoundLog extends LogOrigin {
  resolver: string;
  asset: string;
  feed: string;
  maxAgeSeconds: bigint;
}

/** `SettingChanged(key, value)` of a system-settings contract; both bytes32 as lowercase hex. */
export interface SettingChangedLog extends LogOrigin {
  contract: string;
  key: string;
  value: string;
}

/**
 * The decoded logs of one read (a live-tail batch or a catch-up chunk), one list per event, each
 * in (blockNumber, logIndex) order.
 */
export interface LedgerLogs {
  transfers: Erc20TransferLog[];
  feeds: FeedCreatedLog[];
  observations: ObservationLog[];
  bounds: StalenessBoundLog[];
  settings: SettingChangedLog[];
}

export function emptyLogs(): LedgerLogs {
  return { transfers: [], feeds: [], observations: [], bounds: [], settings: [] };
}

/** Every log of `logs` as its origin, whichever event it is (branch and canonical-hash checks). */
export function logOrigins(logs: LedgerLogs): LogOrigin[] {
  return [...logs.transfers, ...logs.feeds, ...logs.observations, ...logs.bounds, ...logs.settings];
}

/** The number of logs in `logs`. */
export function logCount(logs: LedgerLogs): number {
  return (
    logs.transfers.length +
    logs.feeds.length +
    logs.observations.length +
    logs.bounds.length +
    logs.settings.length
  );
}

/**
 * One domain table: its name, the scope kind whose contracts' logs it takes, the column naming the
 * emitting contract, and the event's own columns with their SQL types and values.
 */
interface DomainTable<L extends LogOrigin> {
  table: string;
  kind: string;
  emitter: string;
  columns: readonly [name: string, type: string, value: (log: L) => unknown][];
}

const FEEDS: DomainTable<FeedCreatedLog> = {
  table: "ledger_price_feeds",
  kind: "price-feed",
  emitter: "feed",
  columns: [
    ["feed", "text", (l) => l.feed],
    ["asset", "text", (l) => l.asset],
    ["owner", "text", (l) => l.owner],
    ["decimals", "int", (l) => l.decimals],
  ],
};

const OBSERVATIONS: DomainTable<ObservationLog> = {
  table: "ledger_price_observations",
  kind: "price-feed",
  emitter: "feed",
  columns: [
    ["feed", "text", (l) => l.feed],
    ["round_id", "numeric", (l) => l.roundId.toString()],
    ["answer", "numeric", (l) => l.answer.toString()],
    ["updated_at", "numeric", (l) => l.updatedAt.toString()],
  ],
};

const BOUNDS: DomainTable<StalenessBoundLog> = {
  table: "ledger_staleness_bounds",
  kind: "price-resolver",
  emitter: "resolver",
  columns: [
    ["resolver", "text", (l) => l.resolver],
    ["asset", "text", (l) => l.asset],
    ["feed", "text", (l) => l.feed],
    ["max_age_seconds", "numeric", (l) => l.maxAgeSeconds.toString()],
  ],
};

const SETTINGS: DomainTable<SettingChangedLog> = {
  table: "ledger_setting_changes",
  kind: "system-settings",
  emitter: "contract",
  columns: [
    ["contract", "text", (l) => l.contract],
    ["key", "text", (l) => l.key],
    ["value", "text", (l) => l.value],
  ],
};

/** The domain tables besides the ERC-20 ones, which fold into balances and have their own module. */
export const DOMAIN_TABLES = [FEEDS.table, OBSERVATIONS.table, BOUNDS.table, SETTINGS.table] as const;

/**
 * Inserts every log the scope admits, in the caller's transaction: transfers (folded into
 * balances and supply) and the domain rows. A log is admitted when a scope row of the emitting
 * contract, of the event's kind, has [added, removed] heights containing the log's block; the
 * check reads the scope inside this transaction, so a committed removal is always honoured. A log
 * already present is skipped. Returns the number of rows inserted.
 */
export async function insertLedgerLogs(
  client: PoolClient,
  chainId: number,
  logs: LedgerLogs,
): Promise<number> {
  let inserted = await insertTransfers(client, chainId, logs.transfers);
  inserted += await insertDomain(client, chainId, FEEDS, logs.feeds);
  inserted += await insertDomain(client, chainId, OBSERVATIONS, logs.observations);
  inserted += await insertDomain(client, chainId, BOUNDS, logs.bounds);
  inserted += await insertDomain(client, chainId, SETTINGS, logs.settings);
  return inserted;
}

async function insertDomain<L extends LogOrigin>(
  client: PoolClient,
  chainId: number,
  spec: DomainTable<L>,
  logs: readonly L[],
): Promise<number> {
  if (logs.length === 0) return 0;
  const names = spec.columns.map(([name]) => name);
  // $1 chain, $2 kind, then block_number, log_index, block_hash, tx_hash, then the event's columns.
  const arrays = ["bigint", "int", "text", "text", ...spec.columns.map(([, type]) => type)]
    .map((type, i) => `$${i + 3}::${type}[]`)
    .join(", ");
  const all = ["block_number", "log_index", "block_hash", "tx_hash", ...names];
  const { rowCount } = await client.query(
    `INSERT INTO ${spec.table} (chain_id, ${all.join(", ")})
     SELECT $1, ${all.map((c) => `i.${c}`).join(", ")}
     FROM unnest(${arrays}) AS i(${all.join(", ")})
     WHERE EXISTS (SELECT 1 FROM ledger_scope s
                   WHERE s.chain_id = $1 AND s.address = i.${spec.emitter} AND s.kind = $2
                     AND i.block_number >= s.added_height
                     AND (s.removed_height IS NULL OR i.block_number <= s.removed_height))
     ON CONFLICT DO NOTHING`,
    [
      chainId,
      spec.kind,
      logs.map((l) => l.blockNumber.toString()),
      logs.map((l) => l.logIndex),
      logs.map((l) => l.blockHash),
      logs.map((l) => l.txHash),
      ...spec.columns.map(([, , value]) => logs.map(value)),
    ],
  );
  return rowCount ?? 0;
}

/**
 * Deletes every domain row above `height`, in the caller's transaction (a rollback). Nothing else
 * needs undoing: latest values are read from the remaining rows. Returns the rows removed.
 */
export async function deleteDomainRowsAbove(
  client: PoolClient,
  chainId: number,
  height: bigint,
): Promise<number> {
  let deleted = 0;
  for (const table of DOMAIN_TABLES) {
    const { rowCount } = await client.query(
      `DELETE FROM ${table} WHERE chain_id = $1 AND block_number > $2`,
      [chainId, height.toString()],
    );
    deleted += rowCount ?? 0;
  }
  return deleted;
}
