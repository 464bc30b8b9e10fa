import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { corporateActionDistribution } from "../../flows/corporate-actions/distribution.js";
import { ALL_ACTIVITIES, ALL_WORKFLOWS } from "../../flows/index.js";
import type { TestKit } from "../../src/testing/index.js";
import { application } from "../../workers/application.js";
import { deployTestToken } from "../flows/corporate-actions/support/corporate-world.js";
import { ANVIL_KEYS, type Anvil, startAnvil } from "../support/anvil.js";
import { recordHistoryFixture, startFileTestKit } from "../support/test-kit.js";

/**
 * The test kit on `corporate-action.distribute` with a record date next month, on a real anvil:
 * the run sleeps until the record date, the test skips a month of workflow time (and moves the
 * chain's block times past the record date), and the run resolves the record height as the last
 * block at or before it, then waits for the Ledger Index, where the test cancels it.
 */
const DAY_MS = 86_400_000;
let anvil: Anvil;
let kit: TestKit;
let stop: () => Promise<void>;
let asset: string;
let payment: string;

beforeAll(async () => {
  anvil = await startAnvil();
  asset = (await deployTestToken(anvil, "BOND", 18)).token;
  payment = (await deployTestToken(anvil, "USDX", 6)).token;
  ({ kit, stop } = await startFileTestKit(import.meta.url, {
    workflows: ALL_WORKFLOWS,
    activities: ALL_ACTIVITIES,
    // The application's own services, as its runner provides them.
    ...(application.services ? { services: application.services } : {}),
    orgId: "acme",
    config: {
      chains: [{ id: anvil.chainId, name: "anvil", rpcUrls: [anvil.url], finality: { depth: 1 } }],
      signers: [{ id: "payer", kind: "local", orgId: "acme", privateKey: { env: "CA_PAYER_KEY" } }],
    },
    env: { CA_PAYER_KEY: ANVIL_KEYS[4] },
  }));
});
afterAll(async () => {
  await stop?.();
  await anvil?.stop();
});

describe("the test kit on corporate-action.distribute", () => {
  it("sleeps to a record date next month, then resolves the record height at once after a skip", async () => {
    const recordDate = new Date(Math.floor((Date.now() + 30 * DAY_MS) / 1000) * 1000);
    const run = await kit.start(corporateActionDistribution, {
      actionId: "coupon-2027-01",
      kind: "coupon",
      chainId: anvil.chainId,
      asset,
      paymentToken: payment,
      amount: "1000",
      rounding: "floor",
      recordDate: recordDate.toISOString(),
      payerSignerId: "payer",
    });
    const sleeping = await run.waitForWait("timer", "record.date");
    expect(sleeping.waitingFor?.[0]?.until).toBe(recordDate.toISOString());

    // The chain moves too: a block a minute before the record date, then two after it (depth 1).
    const recordTime = BigInt(recordDate.getTime() / 1000);
    await anvil.test.setNextBlockTimestamp({ timestamp: recordTime - 60n });
    await anvil.mine(1);
    const recordBlock = await anvil.public.getBlockNumber();
    await anvil.test.setNextBlockTimestamp({ timestamp: recordTime + 1n });
    await anvil.mine(2);

    await kit.skipTo(recordDate);
    const indexing = await run.waitForWait("condition", `indexed:${anvil.chainId}:${recordBlock}`);
    expect(indexing.status).toBe("waiting");
    const journal = await run.journal();
    const at = (name: string) => journal.find((e) => e.name === name)?.result;
    expect(at("record.date")).toEqual({ wakeAt: recordDate.toISOString() });
    expect(at("record.settled")).toEqual({ satisfied: true });
    expect(at("record.height")).toMatchObject({ height: recordBlock.toString() });

    await recordHistoryFixture("corporate-action-v1-awaiting-index", run);
    await run.cancel();
    expect((await run.finished()).failure?.code).toBe("CANCELLED");
  });
});
