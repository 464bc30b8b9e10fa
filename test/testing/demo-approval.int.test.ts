import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoAssetIssue, deployDemoToken, provisionDemoWallet } from "../../flows/demo-asset-issue.js";
import { approvalSignalName } from "../../src/engine/approvals.js";
import { replayHistory, type TestKit, VOTE_REFUSED } from "../../src/testing/index.js";
import { recordHistoryFixture, startFileTestKit } from "../support/test-kit.js";

/**
 * The test kit on the quick-start flow `demo.asset-issue` (an identity-bound approval with a
 * deadline, a durable sleep, a child): an approval that expires after 2 days, a 30-day settlement
 * timer, a cancel, each driven in real seconds by skipping virtual time.
 */
const DAY_MS = 86_400_000;
let kit: TestKit;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ kit, stop } = await startFileTestKit(import.meta.url, {
    workflows: [demoAssetIssue, provisionDemoWallet],
    activities: [deployDemoToken],
  }));
});
afterAll(async () => {
  await stop?.();
});

describe("the test kit on demo.asset-issue", () => {
  it("expires an approval after 2 days of virtual time, the deadline journaled in virtual time", async () => {
    const run = await kit.start(demoAssetIssue, { symbol: "EXP", approvalTimeout: "2d" });
    const waiting = await run.waitForWait("approval", "issue");
    const startedAt = kit.clock.now();
    const deadline = Date.parse(waiting.waitingFor?.[0]?.until ?? "");
    expect(Math.abs(deadline - (startedAt + 2 * DAY_MS))).toBeLessThan(60_000);

    await kit.skipTime("1d");
    expect((await run.view()).status).toBe("waiting");
    await kit.skipTime("1d");
    const failed = await run.finished();
    await recordHistoryFixture("demo-asset-issue-v2-expired", run);
    expect(failed.status).toBe("failed");
    expect(failed.failure?.code).toBe("APPROVAL_EXPIRED");
    const approval = (await run.journal()).find((e) => e.name === approvalSignalName("issue"));
    expect(approval?.result).toEqual({ timedOut: true });
  });

  it("takes an approval from a named subject (not the starter), then a 30-day timer fires at once", async () => {
    const began = Date.now();
    const run = await kit.start(demoAssetIssue, { symbol: "SETL", settle: "30d" }, { as: "bob" });
    await run.waitForWait("approval", "issue");
    await expect(run.approve("issue", { as: "bob" })).rejects.toMatchObject({
      code: VOTE_REFUSED,
      details: { refusal: "self-approval" },
    });
    await recordHistoryFixture("demo-asset-issue-v2-awaiting-approval", run);
    await run.approve("issue", { as: "alice" });
    const sleeping = await run.waitForWait("timer", "settle");
    expect(Date.parse(sleeping.waitingFor?.[0]?.until ?? "") - kit.clock.now()).toBeGreaterThan(29 * DAY_MS);

    const skippedTo = await kit.skipTime("30d");
    const output = await run.output();
    expect(output).toMatchObject({ symbol: "SETL", approvedBy: "alice" });
    expect(output.treasuryWallet).toMatch(/^wallet-test-treasury-/);
    const settle = (await run.journal()).find((e) => e.kind === "sleep" && e.name === "settle");
    const wakeAt = Date.parse((settle?.result as { wakeAt: string } | undefined)?.wakeAt ?? "");
    expect(wakeAt).toBeGreaterThan(began + 29 * DAY_MS);
    expect(wakeAt).toBeLessThanOrEqual(skippedTo.getTime());
    // Days of workflow time in seconds of test time.
    expect(Date.now() - began).toBeLessThan(15_000);

    await recordHistoryFixture("demo-asset-issue-v2-completed", run);
    const history = await run.history();
    expect(history.execution).toMatchObject({
      workflow: "demo.asset-issue",
      workflowVersion: 2,
      status: "completed",
    });
    expect(await replayHistory(history, kit.workflows)).toEqual({ ok: true, reached: "completed" });
  });

  it("cancels a run waiting for its approval", async () => {
    const run = await kit.start(demoAssetIssue, { symbol: "CNCL" });
    await run.waitForWait("approval", "issue");
    await run.cancel();
    const view = await run.finished();
    expect(view.failure?.code).toBe("CANCELLED");
  });
});
