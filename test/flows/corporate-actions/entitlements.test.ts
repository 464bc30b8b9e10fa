import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { batchesOf, computeEntitlements } from "../../../flows/corporate-actions/entitlements.js";
import { defineAsset, TokenAmount } from "../../../src/values/index.js";

const bond = defineAsset({ id: "eip155:1/erc20:0xb0", decimals: 18, symbol: "BOND" });
const usdx = defineAsset({ id: "eip155:1/erc20:0xc0", decimals: 6, symbol: "USDX" });
const holder = (i: number) => `0x${i.toString(16).padStart(40, "0")}`;

describe("entitlements", () => {
  it("pay the declared amount minus a recorded residue, skip shares rounded to zero, hash what is paid", () => {
    const holders = [
      { holder: holder(1), balance: "1000000000000000000" },
      { holder: holder(2), balance: "2000000000000000000" },
      { holder: holder(3), balance: "1" }, // its share of 10 USDX rounds to zero
    ];
    const declared = TokenAmount.parse(usdx, "10");
    const e = computeEntitlements(declared, bond, holders, "floor");
    expect(e.entitled.map((x) => x.holder)).toEqual([holder(1), holder(2)]);
    expect(e.entitled.map((x) => x.amount.describe())).toEqual([
      TokenAmount.parse(usdx, "3.333333").describe(),
      TokenAmount.parse(usdx, "6.666666").describe(),
    ]);
    expect(e.roundedToZero).toBe(1);
    expect(e.residue.equals(TokenAmount.parse(usdx, "0.000001"))).toBe(true);
    expect(e.total.plus(e.residue).equals(declared)).toBe(true);
    // The hash binds holders and amounts: the same inputs give the same hash, another amount another.
    expect(computeEntitlements(declared, bond, holders, "floor").hash).toBe(e.hash);
    expect(computeEntitlements(TokenAmount.parse(usdx, "11"), bond, holders, "floor").hash).not.toBe(e.hash);
  });

  it("batches keep every entitlement once, in order", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer(), { maxLength: 300 }),
        fc.integer({ min: 1, max: 50 }),
        (items, size) => {
          const batches = batchesOf(items, size);
          expect(batches.flat()).toEqual(items);
          expect(batches.every((b) => b.length >= 1 && b.length <= size)).toBe(true);
          expect(batches.length).toBe(Math.ceil(items.length / size));
        },
      ),
    );
  });
});
