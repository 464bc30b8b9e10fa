import { describe, expect, it } from "vitest";
import { createMetrics, scrapedGauge } from "../../src/observability/metrics.js";

/**
 * A runner whose start failed after its gauges were registered is relaunched in the same process
 * with the same registry (src/roles/startup-relaunch.ts): registering again must work, and the
 * scrape must read through the newest attempt's dependencies.
 */
describe("scraped gauges", () => {
  it("register again on a relaunched start, the newest reader answering the scrape", async () => {
    const metrics = createMetrics("runner");
    const options = { name: "tenor_test_backlog", help: "Test backlog.", labelNames: ["queue"] as const };
    scrapedGauge(metrics, options, async () => [{ labels: { queue: "q" }, value: 1 }]);
    expect(() =>
      scrapedGauge(metrics, options, async () => [{ labels: { queue: "q" }, value: 2 }]),
    ).not.toThrow();
    const text = await metrics.registry.metrics();
    expect(text).toContain('tenor_test_backlog{queue="q",role="runner"} 2');
    expect(text).not.toContain('tenor_test_backlog{queue="q",role="runner"} 1');
  });
});
