import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { allocateProRata, TokenAmount, ValueErrorCode } from "../../src/values/index.js";
import { tokenAmountFromUnits, tokenUnits } from "../../src/values/token-amount.js";
import { dai, thrownCode, usdc, wbtc } from "./support.js";

const holdingsArb = fc
  .array(fc.bigInt({ min: 0n, max: 10n ** 30n }), { minLength: 1, maxLength: 60 })
  .filter((units) => units.some((u) => u > 0n));
const totalArb = fc.bigInt({ min: 0n, max: 10n ** 36n });
const roundingArb = fc.constantFrom("floor" as const, "down" as const);

describe("allocateProRata", () => {
  it("loses nothing: Σ shares + residue = total, the residue below one base unit per share", () => {
    fc.assert(
      fc.property(totalArb, holdingsArb, roundingArb, (totalUnits, holdings, rounding) => {
        const total = tokenAmountFromUnits(usdc, totalUnits);
        const weights = holdings.map((u) => tokenAmountFromUnits(dai, u));
        const { shares, residue } = allocateProRata(total, weights, rounding);
        expect(shares).toHaveLength(weights.length);
        expect(TokenAmount.sum(usdc, shares).plus(residue).equals(total)).toBe(true);
        expect(tokenUnits(residue) >= 0n).toBe(true);
        expect(tokenUnits(residue) < BigInt(shares.length)).toBe(true);
      }),
    );
  });

  it("gives each weight its exact pro-rata share rounded down, and a larger weight never less", () => {
    fc.assert(
      fc.property(totalArb, holdingsArb, (totalUnits, holdings) => {
        const sum = holdings.reduce((a, b) => a + b, 0n);
        const { shares } = allocateProRata(
          tokenAmountFromUnits(usdc, totalUnits),
          holdings.map((u) => tokenAmountFromUnits(dai, u)),
          "floor",
        );
        holdings.forEach((u, i) => {
          expect(tokenUnits(shares[i] as TokenAmount)).toBe((totalUnits * u) / sum);
          holdings.forEach((v, j) => {
            if (u >= v)
              expect(tokenUnits(shares[i] as TokenAmount) >= tokenUnits(shares[j] as TokenAmount)).toBe(true);
          });
        });
      }),
    );
  });

  it("records the residue of an uneven split: 100.000000 over three equal holders", () => {
    const total = TokenAmount.parse(usdc, "100");
    const one = TokenAmount.parse(wbtc, "1");
    const { shares, residue } = allocateProRata(total, [one, one, one], "floor");
    expect(shares.map((s) => tokenUnits(s))).toEqual([33_333_333n, 33_333_333n, 33_333_333n]);
    expect(tokenUnits(residue)).toBe(1n);
    expect(residue.asset).toEqual(usdc);
  });

  it("refuses a mode that could round a share up, a negative weight, mixed weights and a zero sum", () => {
    const total = TokenAmount.parse(usdc, "1");
    const one = TokenAmount.parse(wbtc, "1");
    for (const mode of ["ceil", "up", "half-even", "exact"]) {
      expect(thrownCode(() => allocateProRata(total, [one], mode as "floor"))).toBe(
        ValueErrorCode.INVALID_ROUNDING_MODE,
      );
    }
    const minusOne = TokenAmount.parse(wbtc, "-1", { allowNegative: true });
    expect(thrownCode(() => allocateProRata(total, [one, minusOne], "floor"))).toBe(ValueErrorCode.NEGATIVE);
    expect(thrownCode(() => allocateProRata(total, [one, TokenAmount.parse(dai, "1")], "floor"))).toBe(
      ValueErrorCode.ASSET_MISMATCH,
    );
    expect(thrownCode(() => allocateProRata(total, [TokenAmount.zero(wbtc)], "floor"))).toBe(
      ValueErrorCode.DIVISION_BY_ZERO,
    );
  });
});
