import { describe, expect, it } from "vitest";
import { bumpFees, feeCap } from "../../src/chain/lifecycle/fee-bump.js";
import { explainBump, FeeBumpWhy } from "../../src/chain/lifecycle/fee-bump-record.js";
import { defineChain, GasPrice } from "../../src/values/index.js";

const chain = defineChain({ id: 31337, nativeCurrency: { symbol: "ETH", decimals: 18 } });
const wei = (text: string) => GasPrice.parse(chain, text, "wei");
const fees = (max: string, tip: string) => ({ maxFeePerGas: wei(max), maxPriorityFeePerGas: wei(tip) });
const text = (f: { maxFeePerGas: GasPrice; maxPriorityFeePerGas: GasPrice }) => [
  f.maxFeePerGas.describe(),
  f.maxPriorityFeePerGas.describe(),
];

describe("fee bumps", () => {
  it("raises both fields by at least 12.5 %, rounding up to the wei", () => {
    const decision = bumpFees(fees("1000", "101"), fees("1", "1"), { bumpPercent: 12.5 });
    expect(decision.replace).toBe(true);
    if (decision.replace) expect(text(decision.fees)).toEqual(text(fees("1125", "114")));
  });

  it("never bumps less than 12.5 % whatever is configured, and follows a higher node suggestion", () => {
    const low = bumpFees(fees("1000", "100"), fees("1", "1"), { bumpPercent: 5 });
    expect(low.replace).toBe(true);
    if (low.replace) expect(text(low.fees)).toEqual(text(fees("1125", "113")));
    const market = bumpFees(fees("1000", "100"), fees("5000", "300"), { bumpPercent: 12.5 });
    expect(market.replace).toBe(true);
    if (market.replace) expect(text(market.fees)).toEqual(text(fees("5000", "300")));
  });

  it("refuses a replacement above the cap rather than sending one the node would refuse", () => {
    const decision = bumpFees(fees("1000", "100"), fees("1", "1"), {
      bumpPercent: 12.5,
      cap: feeCap(chain, "1100"),
    });
    expect(decision).toMatchObject({ replace: false, reason: expect.stringContaining("cap") });
  });
});

describe("why a fee was bumped", () => {
  const stuck = {
    attempt: 0,
    hash: `0x${"ab".repeat(32)}` as const,
    fees: fees("2000000000", "1000000000"),
  };
  const rules = { stuckAfterMs: 30_000, bumpPercent: 12.5 };

  it("names the rule behind each field: the configured raise, the node's suggestion, the new tip", () => {
    const raised = bumpFees(stuck.fees, fees("1", "1"), { bumpPercent: 12.5 });
    expect(raised).toMatchObject({
      raisedBy: { maxFeePerGas: "bumpPercent", maxPriorityFeePerGas: "bumpPercent" },
    });
    const market = bumpFees(stuck.fees, fees("9000000000", "1"), { bumpPercent: 12.5 });
    expect(market).toMatchObject({
      raisedBy: { maxFeePerGas: "nodeSuggestion", maxPriorityFeePerGas: "bumpPercent" },
    });
    // A tip suggestion above the bumped max fee: the max fee follows the tip.
    const tip = bumpFees(fees("1000", "900"), fees("1", "5000"), { bumpPercent: 12.5 });
    expect(tip).toMatchObject({
      raisedBy: { maxFeePerGas: "priorityFee", maxPriorityFeePerGas: "nodeSuggestion" },
    });
  });

  it("records the trigger, old, suggested and new fees, and says it in one sentence", () => {
    const suggested = fees("1", "1");
    const decision = bumpFees(stuck.fees, suggested, { bumpPercent: 12.5 });
    const why = explainBump(chain, stuck, suggested, decision, rules);
    expect(why).toEqual({
      trigger: "fees.stuckAfterMs",
      stuckAfterMs: 30_000,
      attempt: 0,
      hash: stuck.hash,
      previous: { maxFeePerGas: "2000000000", maxPriorityFeePerGas: "1000000000" },
      suggested: { maxFeePerGas: "1", maxPriorityFeePerGas: "1" },
      bumpPercent: 12.5,
      raisedBy: { maxFeePerGas: "bumpPercent", maxPriorityFeePerGas: "bumpPercent" },
      summary:
        `attempt 0 (${stuck.hash}) had no receipt 30000 ms after its broadcast (fees.stuckAfterMs); replaced: ` +
        "maxFeePerGas 2 → 2.25 gwei (+12.5 %, fees.bumpPercent), maxPriorityFeePerGas 1 → 1.125 gwei (+12.5 %, fees.bumpPercent)",
    });
    expect(FeeBumpWhy.parse(why)).toEqual(why);
  });

  it("says why there is no replacement when the cap forbids one", () => {
    const decision = bumpFees(stuck.fees, fees("1", "1"), {
      bumpPercent: 12.5,
      cap: feeCap(chain, "2100000000"),
    });
    const why = explainBump(chain, stuck, fees("1", "1"), decision, {
      ...rules,
      maxFeePerGasWei: "2100000000",
    });
    expect(why).toMatchObject({ capWei: "2100000000" });
    expect(why).not.toHaveProperty("raisedBy");
    expect(why.summary).toMatch(/; no replacement: a replacement needs maxFeePerGas .* above the cap/);
  });
});
