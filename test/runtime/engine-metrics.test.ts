import { describe, expect, it } from "vitest";
import { createMetrics } from "../../src/observability/metrics.js";
import { engineMetricsHooks, MAX_STEP_LABELS_PER_WORKFLOW } from "../../src/runtime/engine-metrics.js";

/** Step durations are labelled by step name, bounded per workflow (src/runtime/engine-metrics.ts). */
describe("step duration by step name", () => {
  it("labels each step by name, and names past the bound of a workflow as other", async () => {
    const metrics = createMetrics("runner");
    const hooks = engineMetricsHooks(metrics);
    hooks.turnStarted?.({ executionId: "e1", workflow: "w" });
    const steps = Array.from({ length: MAX_STEP_LABELS_PER_WORKFLOW + 5 }, (_, i) => `pay ${i}`);
    for (const step of [...steps, "pay 0"]) {
      await hooks.beforeCheckpoint?.({ executionId: "e1", step, position: 0, durationMs: 5 });
    }
    const { values } = await metrics.stepDuration.get();
    const counts = new Map(
      values
        .filter((v) => v.metricName === "tenor_step_duration_seconds_count")
        .map((v) => [String(v.labels.step), v.value]),
    );
    expect(counts.get("pay 0")).toBe(2);
    expect(counts.get(`pay ${MAX_STEP_LABELS_PER_WORKFLOW - 1}`)).toBe(1);
    expect(counts.has(`pay ${MAX_STEP_LABELS_PER_WORKFLOW}`)).toBe(false);
    expect(counts.get("other")).toBe(5);
    expect(counts.size).toBe(MAX_STEP_LABELS_PER_WORKFLOW + 1);
  });
});
