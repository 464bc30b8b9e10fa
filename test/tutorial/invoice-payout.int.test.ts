import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestKit } from "../../src/testing/index.js";
import { replayHistory } from "../../src/testing/index.js";
import { TokenAmount } from "../../src/values/index.js";
import { recordHistoryFixture, startFileTestKit } from "../support/test-kit.js";
import { EUR, invoicePayout, TUTORIAL_WORKFLOWS } from "./invoice-payout.js";

// docs/writing-workflows.md quotes this file: keep the two in step.

// [kit]
let kit: TestKit;
let stop: () => Promise<void>;

beforeAll(async () => {
  // In your own repository: startTestKit({ databaseUrl, redisUrl, workflows }) from "tenor/testing".
  ({ kit, stop } = await startFileTestKit(import.meta.url, { workflows: TUTORIAL_WORKFLOWS, orgId: "acme" }));
});
afterAll(async () => {
  await stop?.();
});
// [/kit]

describe("tutorial.invoice-payout", () => {
  // [happy-path]
  it("pays after approval, 30 days of terms and the bank's confirmation", async () => {
    const run = await kit.start(invoicePayout, {
      invoiceId: "INV-1001",
      supplier: "globex",
      amount: "1250.50",
    });

    await run.waitForWait("approval", "payout");
    await run.approve("payout", { as: "carol" }); // a named subject, not the one who started it

    await run.waitForWait("timer", "payment.terms");
    await kit.skipTime("30d"); // fires the timer now; the journal keeps the virtual wake time

    await run.waitForWait("signal", "bank.settled");
    await run.signal("bank.settled", { reference: "BANK-77" });

    const output = await run.output(); // decoded through the output schema: typed values
    expect(output.paid.equals(TokenAmount.parse(EUR, "1250.50"))).toBe(true);
    expect(output).toMatchObject({ approvedBy: "carol", settlementRef: "BANK-77" });
    expect(output.remittance).toMatch(/^RA-INV-1001-/);
    expect(Date.parse(output.paidAt) - Date.now()).toBeGreaterThan(29 * 86_400_000);

    const journal = await run.journal();
    expect(journal.map((e) => `${e.kind} ${e.name}`)).toEqual([
      "step invoice.check",
      "signal $approval:payout",
      "sleep payment.terms",
      "child tutorial.remittance-advice",
      "signal bank.settled",
      "now now",
    ]);
    await recordHistoryFixture("tutorial-invoice-payout-v1-completed", run);
    expect(await replayHistory(await run.history(), kit.workflows)).toEqual({
      ok: true,
      reached: "completed",
    });
  });
  // [/happy-path]

  // [expiry]
  it("fails APPROVAL_EXPIRED when nobody approves within 2 days", async () => {
    const run = await kit.start(invoicePayout, { invoiceId: "INV-1002", supplier: "initech", amount: "80" });
    await run.waitForWait("approval", "payout");
    await kit.skipTime("2d");
    expect((await run.finished()).failure?.code).toBe("APPROVAL_EXPIRED");
  });
  // [/expiry]
});
