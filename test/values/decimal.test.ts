import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decimalCoefficient, decimalFromCoefficient } from "../../src/values/decimal.js";
import { Decimal, ValueErrorCode } from "../../src/values/index.js";
import { thrownCode } from "./support.js";

const decimalArb = fc
  .record({
    coefficient: fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
    scale: fc.integer({ min: 0, max: 18 }),
  })
  .map(({ coefficient, scale }) => decimalFromCoefficient(coefficient, scale));

describe("Decimal", () => {
  it("parses at exactly the declared scale", () => {
    const rate = Decimal.parse("1.5", 4);
    expect(rate.scale).toBe(4);
    expect(decimalCoefficient(rate)).toBe(15000n);
    expect(thrownCode(() => Decimal.parse("1.23456", 4))).toBe(ValueErrorCode.TOO_MANY_DECIMALS);
    expect(thrownCode(() => Decimal.parse("-1", 4))).toBe(ValueErrorCode.NEGATIVE);
    expect(decimalCoefficient(Decimal.parse("-1", 4, { allowNegative: true }))).toBe(-10000n);
    expect(thrownCode(() => Decimal.parse("1", 37))).toBe(ValueErrorCode.INVALID_SCALE);
  });

  it("adds and subtracts exactly at the larger scale", () => {
    const sum = Decimal.parse("1.5", 1).plus(Decimal.parse("0.25", 2));
    expect(sum.scale).toBe(2);
    expect(decimalCoefficient(sum)).toBe(175n);
    expect(decimalCoefficient(Decimal.parse("1", 0).minus(Decimal.parse("0.25", 2)))).toBe(75n);
  });

  it("multiplies into a named scale with a named rounding mode", () => {
    const price = Decimal.parse("1.0825", 4);
    const qty = Decimal.parse("3.3", 1);
    expect(thrownCode(() => price.times(qty, 2, "exact"))).toBe(ValueErrorCode.PRECISION_LOSS);
    expect(decimalCoefficient(price.times(qty, 2, "half-even"))).toBe(357n); // 3.57225
    expect(decimalCoefficient(price.times(qty, 5, "exact"))).toBe(357225n);
  });

  it("multiplies decimals whose combined scale exceeds 36 into a smaller scale", () => {
    const tiny = Decimal.parse("0.000000000000000000000000000001", 30);
    expect(decimalCoefficient(tiny.times(tiny, 36, "floor"))).toBe(0n);
    expect(decimalCoefficient(Decimal.parse("2", 30).times(Decimal.parse("3", 30), 0, "exact"))).toBe(6n);
  });

  it("compares by value across scales", () => {
    expect(Decimal.parse("1.5", 1).equals(Decimal.parse("1.50", 2))).toBe(true);
    expect(Decimal.parse("1.49", 2).compare(Decimal.parse("1.5", 1))).toBe(-1);
  });

  it("satisfies the additive group laws", () => {
    fc.assert(
      fc.property(decimalArb, decimalArb, decimalArb, (a, b, c) => {
        expect(a.plus(b).equals(b.plus(a))).toBe(true);
        expect(
          a
            .plus(b)
            .plus(c)
            .equals(a.plus(b.plus(c))),
        ).toBe(true);
        expect(a.plus(b).minus(b).equals(a)).toBe(true);
        expect(a.minus(b).isNegative()).toBe(a.compare(b) < 0);
      }),
    );
  });

  it("widening is exact and narrowing back with exact restores the value", () => {
    fc.assert(
      fc.property(decimalArb, fc.integer({ min: 0, max: 18 }), (a, extra) => {
        const wide = a.rescale(a.scale + extra, "exact");
        expect(wide.equals(a)).toBe(true);
        expect(decimalCoefficient(wide.rescale(a.scale, "exact"))).toBe(decimalCoefficient(a));
      }),
    );
  });

  it("floor and ceil bracket the value when narrowing", () => {
    fc.assert(
      fc.property(decimalArb, fc.integer({ min: 0, max: 18 }), (a, target) => {
        expect(a.rescale(target, "floor").compare(a)).toBeLessThanOrEqual(0);
        expect(a.rescale(target, "ceil").compare(a)).toBeGreaterThanOrEqual(0);
      }),
    );
  });

  it("turns into an exact factor", () => {
    expect(Decimal.parse("1.125", 3).toRational().describe()).toBe("Rational(9/8)");
    expect(Decimal.ONE.toRational().describe()).toBe("Rational(1/1)");
  });
});
