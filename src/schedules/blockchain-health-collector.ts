import { SCHEDULE_NAMES, type ScheduleDefinition } from "./schedule-definition.js";

/** One chain's health as the Ledger Index reports it (docs/ledger-index.md, "Health"): what a tick records. */
export interface IndexedChainHealth {
  chainId: number;
  headHeight: string;
  indexedHeight: string;
  lagBlocks: number;
  /** Head block time minus indexed block time, in seconds (0 when caught up). */
  lagSeconds: number;
  lastReorgDepth: number;
  /** Catch-up ranges not completed yet. */
  openRanges: number;
}

/**
 * Reads the health of every chain the Ledger Index has a checkpoint for. The index sits above the
 * schedules, so the runner's host hands in the index's own read.
 */
export type LedgerHealthReader = () => Promise<IndexedChainHealth[]>;

/**
 * The blockchain health collector's schedule: each tick records, on its run, the Ledger Index's
 * health per chain (docs/ledger-index.md, "Health": head and indexed height, lag in blocks and
 * seconds, last reorganisation depth). Outcome `empty` with "no chains indexed" while no indexer
 * has a checkpoint yet, so an operator sees it is alive rather than stopped.
 *
 * @param intervalSeconds - `monitoring.blockchainHealthCollector.intervalSeconds`: whole minutes at
 *   or above 60, a divisor of 60 below it (validated in src/config), so windows align to minutes.
 * @param readHealth - the Ledger Index's health read.
 */
export function blockchainHealthSchedule(
  intervalSeconds: number,
  readHealth: LedgerHealthReader,
): ScheduleDefinition {
  return {
    name: SCHEDULE_NAMES.blockchainHealth,
    cadence: { kind: "every", everyMs: intervalSeconds * 1_000 },
    async run() {
      const chains = await readHealth();
      if (chains.length === 0) return { outcome: "empty", summary: { chains: 0, note: "no chains indexed" } };
      return {
        outcome: "succeeded",
        summary: {
          chains: chains.length,
          maxLagBlocks: Math.max(...chains.map((c) => c.lagBlocks)),
          perChain: chains.map((c) => ({
            chainId: c.chainId,
            headHeight: c.headHeight,
            indexedHeight: c.indexedHeight,
            lagBlocks: c.lagBlocks,
            lagSeconds: c.lagSeconds,
            lastReorgDepth: c.lastReorgDepth,
            openRanges: c.openRanges,
          })),
        },
      };
    },
  };
}
