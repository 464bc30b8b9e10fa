import { describe, expect, it } from "vitest";
import { bumpFees, feeCap } from "../../src/chain/lifecycle/fee-bump.js";
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
