import { METRIC_NAMES } from "../observability/metric-names.js";
import { scrapedGauge, type TenorMetrics } from "../observability/metrics.js";
import type { ReplicaDirectory } from "./replica-directory.js";
import { SHARD_DOMAINS } from "./shard-map.js";

/**
 * `tenor_replicas_live{domain}`: live runners and indexers as PostgreSQL sees them, a series for
 * each domain even at zero. Every role registers it, the api included, so the count of runners
 * still reads 0 (and an alert fires) when no runner is left to report it. A scrape never waits for
 * a pooled connection: with none free, the series is absent from that scrape.
 */
export function registerLiveReplicasGauge(
  metrics: TenorMetrics,
  directory: ReplicaDirectory,
  /** False while reading would wait for a connection: that scrape leaves the series out. */
  canReadNow: () => boolean,
): void {
  scrapedGauge(
    metrics,
    {
      name: METRIC_NAMES.replicasLive,
      help: "Live replicas by domain (runner, indexer): a heartbeat within the liveness window and an open session.",
      labelNames: ["domain"],
    },
    async () => {
      if (!canReadNow()) throw new Error("no free connection: the live count is left out of this scrape");
      const replicas = await directory.list();
      return SHARD_DOMAINS.map((domain) => ({
        labels: { domain },
        value: replicas.filter((r) => r.live && r.domain === domain).length,
      }));
    },
  );
}
