import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { createMetrics } from "../../src/observability/metrics.js";
import { QUEUE_NAMES } from "../../src/transport/queue-names.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/**
 * How long an execution's job waited for a runner (`tenor_job_wait_seconds{queue="executions"}`),
 * on a real runner: a start, a timer's wake and a signal's wake each count once, from the moment
 * the job became ready, never from when the execution was created.
 */
const PARK_MS = 1_500;

const sleepThenSignal = defineWorkflow({
  name: "test.job-wait.sleep-then-signal",
  version: 1,
  input: z.object({}),
  output: z.object({ ok: z.boolean() }),
  async run(ctx) {
    await ctx.step("before", () => 1);
    await ctx.sleep("nap", PARK_MS);
    await ctx.waitForSignal("go", { schema: z.unknown() });
    return { ok: true };
  },
});

const metrics = createMetrics("runner");
let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({ file: import.meta.url, workflows: [sleepThenSignal], metrics });
});

afterAll(async () => {
  await h?.stop();
});

/** The histogram's count or sum for the executions queue (metric-labels.ts declares every workflow). */
async function histogram(suffix: "count" | "sum"): Promise<number | undefined> {
  const metric = await metrics.registry.getSingleMetric("tenor_job_wait_seconds")?.get();
  // prom-client names each histogram sample (`_count`, `_sum`, `_bucket`) on the value itself.
  const values = (metric?.values ?? []) as Array<{
    metricName?: string;
    labels: { queue?: unknown };
    value: number;
  }>;
  return values.find(
    (v) => v.metricName === `tenor_job_wait_seconds_${suffix}` && v.labels.queue === QUEUE_NAMES.executions,
  )?.value;
}

describe("the executions queue's wait for a runner", () => {
  it("is a zero series before any job, then one observation per pickup, timed from readiness", async () => {
    expect(await histogram("count")).toBe(0);
    const { executionId } = await h.client.start({ workflow: sleepThenSignal.name, input: {} });
    await h.waitForView(
      executionId,
      (v) => v.status === "waiting" && (v.waitingFor ?? []).some((w) => w.kind === "signal"),
      "parked on the signal",
    );
    // Parked on the signal well past the timer: a wait timed from creation or from the park
    // would include these seconds.
    await new Promise((resolve) => setTimeout(resolve, PARK_MS));
    await h.client.signal(executionId, "go", {});
    await h.waitForStatus(executionId, "completed");
    // Observed off the turn's path: give the last read a moment to land.
    await expect.poll(() => histogram("count"), { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
    const sum = (await histogram("sum")) as number;
    // The start, the timer's due time and the signal's wake each measured from their own readiness:
    // together far less than one park, which each wrong origin would add at least once.
    expect(sum).toBeLessThan(PARK_MS / 1000);
    expect(sum).toBeGreaterThanOrEqual(0);
  });
});
