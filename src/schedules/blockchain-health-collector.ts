import type { LedgerChainHealth } from "../ledger-index/store/reads.js";
import { SCHEDULE_NAMES, type ScheduleDefinition } from "./schedule-definition.js";

/**
 * The blockchain health collector's schedule: each tick records, on its run, the Ledger Index's
 * health per chain (docs/ledger-index.md, "Health": head and indexed height, lag in blocks and
 * seconds, last reorganisation depth). Outcome `empty` with "no chains indexed" while no indexer
 * has a checkpoint yet, so an operator sees it is alive rather than stopped.
 *
 * @param intervalSeconds - `monitoring.blockchainHealthCollector.intervalSeconds`: whole minutes at
 *   or above 60, a divisor of 60 below it (validated in src/config), so windows align to minutes.
 * @param readHealth - PgLedgerReads.health.
 */
export function blockchainHealthSchedule(
  intervalSeconds: number,
  readHealth: () => Promise<LedgerChainHealth[]>,
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
