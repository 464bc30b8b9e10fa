import client from "prom-client";
import { METRIC_NAMES } from "../observability/metric-names.js";
import { scrapedGauge, type TenorMetrics } from "../observability/metrics.js";
import type { LedgerChainHealth } from "./ledger-reads.js";

/** One health read serves every gauge of a scrape. */
const SCRAPE_CACHE_MS = 1_000;

/**
 * The Ledger Index's health as Prometheus gauges by `chain_id` (a bounded label: the configured
 * chains), read from PostgreSQL at scrape time, and a reorganisation counter. Returns the
 * counter's `inc` for the live tail's `onReorg`.
 */
export function registerLedgerMetrics(
  metrics: TenorMetrics,
  readHealth: () => Promise<LedgerChainHealth[]>,
): (chainId: number, depth: number) => void {
  let cached: { at: number; rows: Promise<LedgerChainHealth[]> } | undefined;
  const health = () => {
    if (!cached || Date.now() - cached.at > SCRAPE_CACHE_MS) cached = { at: Date.now(), rows: readHealth() };
    return cached.rows;
  };
  const gauge = (name: string, help: string, value: (row: LedgerChainHealth) => number) =>
    scrapedGauge(metrics, { name, help, labelNames: ["chain_id"] as const }, async () =>
      (await health()).map((row) => ({ labels: { chain_id: String(row.chainId) }, value: value(row) })),
    );
  gauge(METRIC_NAMES.ledgerHeadHeight, "Newest block the live tail saw, by chain.", (r) =>
    Number(r.headHeight),
  );
  gauge(METRIC_NAMES.ledgerIndexedHeight, "Height fully indexed (tail and catch-up), by chain.", (r) =>
    Number(r.indexedHeight),
  );
  gauge(METRIC_NAMES.ledgerLagBlocks, "Head height minus indexed height, by chain.", (r) => r.lagBlocks);
  gauge(
    METRIC_NAMES.ledgerLagSeconds,
    "Head block time minus indexed block time, in seconds, by chain.",
    (r) => r.lagSeconds,
  );
  gauge(
    METRIC_NAMES.ledgerLastReorgDepth,
    "Blocks rolled back by the last reorganisation, by chain.",
    (r) => r.lastReorgDepth,
  );
  gauge(
    METRIC_NAMES.ledgerWaitingSeconds,
    "Seconds the live tail has waited for a node that is syncing or behind (0 when it does not wait), by chain.",
    (r) => (r.waiting ? Math.max(0, (Date.now() - Date.parse(r.waiting.since)) / 1_000) : 0),
  );
  const reorgs = new client.Counter({
    name: METRIC_NAMES.ledgerReorgs,
    help: "Reorganisations this replica rolled back, by chain.",
    labelNames: ["chain_id"],
    registers: [metrics.registry],
  });
  return (chainId) => reorgs.inc({ chain_id: String(chainId) });
}
