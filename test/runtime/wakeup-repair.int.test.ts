import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approvalSignalName, hashApprovalParams } from "../../src/engine/approvals.js";
import { childExecutionId } from "../../src/engine/context.js";
import { PgActivityStore } from "../../src/store/pg-activity-store.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";
import {
  approvalWaiter,
  childOrTimeout,
  releaseBlocked,
  signalWaiter,
  stuckActivityRace,
  wakeupActivities,
  wakeupWorkflows,
} from "./fixtures/wakeup-workflows.js";
import { parkedOn } from "./wakeup-support.js";

/**
 * A wake-up lost between commit and wake (the sender killed, Redis erroring) is repaired by the
 * sweep within one sweep interval (docs/engine.md, "Wake-ups without loss"). Each test commits the
 * fact a wake would have announced straight into PostgreSQL and never wakes. The grace period
 * is an hour: only the satisfied-wait repair, not the missing-job repair, can act here.
 */

let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({
    file: import.meta.url,
    workflows: wakeupWorkflows,
    activities: wakeupActivities,
    durable: { sweep: { intervalMs: 500, graceMs: 3_600_000 } },
  });
});

afterAll(async () => {
  releaseBlocked();
  await h?.stop();
});

describe("the sweep repairs a wake lost between commit and wake", () => {
  it("a committed signal whose execution was never woken", async () => {
    const { executionId } = await h.client.start({ workflow: signalWaiter.name, input: { tag: "s1" } });
    await parkedOn(h, executionId, "signal");
    await h.pool.query("INSERT INTO signals (execution_id, name, payload) VALUES ($1, 'poke', '{}')", [
      executionId,
    ]);
    const done = await h.waitForStatus(executionId, "completed", 10_000);
    expect(done.output).toEqual({ timedOut: false });
  });

  it("a resolved activity position whose execution was never woken", async () => {
    const { executionId } = await h.client.start({ workflow: stuckActivityRace.name, input: { tag: "s2" } });
    await parkedOn(h, executionId, "activity");
    // Another run of the activity journaled the outcome and died before waking.
    const resolved = await new PgActivityStore(h.pool).resolve(executionId, 0, {
      state: "ok",
      result: { price: 7 },
      attempts: 1,
    });
    expect(resolved).toBe(true);
    const done = await h.waitForStatus(executionId, "completed", 10_000);
    expect(done.output).toEqual({ winner: "quote:7" });
  });

  it("a terminal child whose parent was never woken", async () => {
    const { executionId } = await h.client.start({ workflow: childOrTimeout.name, input: { tag: "s3" } });
    await parkedOn(h, executionId, "child");
    const childId = childExecutionId(executionId, 0);
    await parkedOn(h, childId, "signal");
    await h.pool.query(
      `UPDATE executions SET status = 'completed', output = '{"done":true}', waiting_for = NULL,
         wake_at = NULL, completed_at = now(), updated_at = now() WHERE id = $1`,
      [childId],
    );
    const done = await h.waitForStatus(executionId, "completed", 10_000);
    expect(done.output).toEqual({ winner: "child" });
  });

  it("a decided approval whose execution was never woken", async () => {
    const { executionId } = await h.client.start({ workflow: approvalWaiter.name, input: { tag: "s4" } });
    await parkedOn(h, executionId, "approval");
    // The API recorded the deciding vote and its decision signal, and died before waking.
    const decision = {
      approved: true,
      paramsHash: hashApprovalParams({ amount: "1" }),
      approvers: [{ keyId: "k1", name: "ops", role: "approver", at: new Date().toISOString() }],
    };
    await h.pool.query("INSERT INTO signals (execution_id, name, payload) VALUES ($1, $2, $3::jsonb)", [
      executionId,
      approvalSignalName("release"),
      JSON.stringify(decision),
    ]);
    const done = await h.waitForStatus(executionId, "completed", 10_000);
    expect(done.output).toEqual({ approved: true });
  });
});
