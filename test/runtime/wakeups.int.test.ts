import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childExecutionId } from "../../src/engine/context.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";
import {
  activityRace,
  childOrSignal,
  childOrTimeout,
  releaseBlocked,
  wakeupActivities,
  wakeupWorkflows,
} from "./fixtures/wakeup-workflows.js";
import { parkedOn } from "./wakeup-support.js";

/**
 * The wake reaches a parked execution wherever BullMQ holds its job
 * (docs/engine.md, "Wake-ups without loss"): an activity or a child wakes a parent parked on it and on a deadline (job in
 * delayed), a signal wakes a parent whose job waits for its children, and a child job that finds
 * its execution already finished wakes the parent. The sweep runs once an hour here, so only the
 * wake itself can finish these executions.
 */

let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({
    file: import.meta.url,
    workflows: wakeupWorkflows,
    activities: wakeupActivities,
    durable: { sweep: { intervalMs: 3_600_000, graceMs: 3_600_000 } },
  });
});

afterAll(async () => {
  releaseBlocked();
  await h?.stop();
});

describe("a wake reaches the job wherever it is parked", () => {
  it("an activity wakes a parent parked on it and on a deadline", async () => {
    const { executionId } = await h.client.start({ workflow: activityRace.name, input: { tag: "a1" } });
    const done = await h.waitForStatus(executionId, "completed", 10_000);
    expect(done.output).toEqual({ winner: "quote" });
  });

  it("a signal wakes a parent whose job waits for its children", async () => {
    const { executionId } = await h.client.start({ workflow: childOrSignal.name, input: { tag: "c1" } });
    await parkedOn(h, executionId, "child");
    await h.client.signal(executionId, "stop", {});
    const done = await h.waitForStatus(executionId, "completed", 10_000);
    expect(done.output).toEqual({ winner: "signal" });
  });

  it("a child wakes a parent parked on it and on a deadline", async () => {
    const { executionId } = await h.client.start({ workflow: childOrTimeout.name, input: { tag: "c2" } });
    await parkedOn(h, executionId, "child");
    const childId = childExecutionId(executionId, 0);
    await parkedOn(h, childId, "signal");
    await h.client.signal(childId, "go", {});
    const done = await h.waitForStatus(executionId, "completed", 10_000);
    expect(done.output).toEqual({ winner: "child" });
  });

  it("a child job that finds its execution finished wakes the parent", async () => {
    const { executionId } = await h.client.start({ workflow: childOrTimeout.name, input: { tag: "g1" } });
    await parkedOn(h, executionId, "child");
    const childId = childExecutionId(executionId, 0);
    await parkedOn(h, childId, "signal");
    // The child's last turn committed its outcome; its runner died before waking the parent.
    await h.pool.query(
      `UPDATE executions SET status = 'completed', output = '{"done":true}', waiting_for = NULL,
         wake_at = NULL, completed_at = now(), updated_at = now() WHERE id = $1`,
      [childId],
    );
    // The child's job runs again (its timer, a stall, a wake) and finds nothing to do.
    await h.runner().queue.wake(childId);
    const done = await h.waitForStatus(executionId, "completed", 10_000);
    expect(done.output).toEqual({ winner: "child" });
  });
});
