import type { Pool } from "pg";
import { METRIC_NAMES } from "../observability/metric-names.js";
import { scrapedGauge, type TenorMetrics } from "../observability/metrics.js";
import { countPendingWebhookDeliveries } from "../store/pg-metrics-queries.js";

/**
 * `tenor_webhook_deliveries_pending`: the outbox's backlog, read from PostgreSQL at scrape time like
 * the runner's other gauges (docs/webhooks.md, "Metrics"). Every runner reports the same number:
 * the deliveries of all organisations, not this runner's share.
 */
export function registerWebhookBacklogGauge(metrics: TenorMetrics, pool: Pool): void {
  scrapedGauge(
    metrics,
    {
      name: METRIC_NAMES.webhookDeliveriesPending,
      help: "Webhook deliveries not final yet (due, waiting for a retry, or in flight), all organisations.",
      labelNames: [],
    },
    async () => [{ labels: {}, value: await countPendingWebhookDeliveries(pool) }],
  );
}
