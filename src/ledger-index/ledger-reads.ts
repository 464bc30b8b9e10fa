/**
 * The Ledger Index's read model as its readers see it (docs/ledger-index.md, "Read model and
 * reads"): the index's store implements these over its tables; the API is handed them.
 */

/**
 * Why the live tail waits for its node instead of ingesting or rolling back: the node says it syncs
 * (`eth_syncing`), its head is below the checkpoint, or it has no block at a height below its head.
 */
export const NODE_WAIT_REASONS = ["node-syncing", "node-behind", "node-block-missing"] as const;
export type NodeWaitReason = (typeof NODE_WAIT_REASONS)[number];

/** Per-chain health of the Ledger Index (docs/ledger-index.md, "Health"). */
export interface LedgerChainHealth {
  chainId: number;
  headHeight: string;
  indexedHeight: string;
  lagBlocks: number;
  /** Head block time minus indexed block time, in seconds (0 when caught up). */
  lagSeconds: number;
  lastReorgDepth: number;
  lastReorgAt: string | null;
  /** Catch-up ranges not completed yet. */
  openRanges: number;
  /**
   * Set while the live tail waits for a node that is syncing or behind instead of ingesting or
   * rolling back: why (`node-syncing`, `node-behind`, `node-block-missing`), what the node
   * answered, and since when (ISO 8601). Null while it does not wait.
   */
  waiting: { reason: NodeWaitReason; detail: string; since: string } | null;
  updatedAt: string;
}

export interface Erc20BalanceRead {
  balance: string;
  totalSupply: string;
  /** The block the answer is as of: the indexed height, or the removal height of a removed contract. */
  asOfBlock: string;
}

/** Heights, balances and health of the index: only rows it holds now (reverted rows are gone). */
export interface LedgerReads {
  /**
   * The height up to which `chainId` is fully indexed, or null before the tail first ran: the
   * live tail's checkpoint, lowered to just below the first block an open catch-up range has
   * not committed yet.
   */
  indexedHeight(chainId: number): Promise<bigint | null>;
  /**
   * `holder`'s balance of `token` and the token's supply; with `throughBlock` (a removed
   * contract's removal height), as of that block.
   */
  erc20Balance(
    chainId: number,
    token: string,
    holder: string,
    throughBlock: bigint | null,
  ): Promise<Erc20BalanceRead>;
  /** Health of every chain the index has a checkpoint for, by chain id. */
  health(): Promise<LedgerChainHealth[]>;
}

/** A price feed as the index holds it, with its latest observation (null before the first). */
export interface PriceFeedRead {
  feed: string;
  asset: string;
  owner: string;
  decimals: number;
  /** The block of the feed's FeedCreated log. */
  createdAtBlock: string;
  latest: ObservationRead | null;
}

export interface ObservationRead {
  roundId: string;
  /** Signed decimal integer, in units of 10^-decimals. */
  answer: string;
  /** The feed's own timestamp, seconds since the epoch. */
  updatedAt: string;
  blockNumber: string;
  logIndex: number;
}

/** An asset's status under an organisation's live resolvers: paused until a bound exists. */
export interface AssetStatusRead {
  asset: string;
  status: "paused" | "active";
  /** The resolver, feed and bound of the latest StalenessBoundSet; null while paused. */
  resolver: string | null;
  feed: string | null;
  maxAgeSeconds: string | null;
  /** The block of the resolver's first bound for the asset: where it turned active. */
  activeSinceBlock: string | null;
  /** The block of the latest bound. */
  boundAtBlock: string | null;
}

export interface SettingRead {
  /** bytes32, 0x-prefixed lowercase hex. */
  key: string;
  value: string;
  /** The block of the change that set this value. */
  blockNumber: string;
}

/**
 * Price feeds, asset status and system settings. `throughBlock` (a removed contract's removal
 * height) hides rows above it; null reads all.
 */
export interface LedgerDomainReads {
  /** The feed and its latest observation up to `throughBlock`; null when its FeedCreated is not indexed. */
  priceFeed(chainId: number, feed: string, throughBlock: bigint | null): Promise<PriceFeedRead | null>;
  /** The feed's observations up to `throughBlock`, newest first, at most `limit`. */
  observations(
    chainId: number,
    feed: string,
    throughBlock: bigint | null,
    limit: number,
  ): Promise<ObservationRead[]>;
  /** The asset's status under `orgId`'s live resolvers and feeds; null when none of them knows it. */
  assetStatus(chainId: number, orgId: string, asset: string): Promise<AssetStatusRead | null>;
  /** Every key's latest value of a settings contract up to `throughBlock`, by key. */
  settings(chainId: number, contract: string, throughBlock: bigint | null): Promise<SettingRead[]>;
}
