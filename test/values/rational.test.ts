import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Rational, ValueErrorCode } from "../../src/values/index.js";
import { inexactRoundingArb, smallOrAny, thrownCode } from "./support.js";

describe("Rational", () => {
  it("reduces and normalises the sign into the numerator", () => {
    expect(Rational.of(2n, 4n).describe()).toBe("Rational(1/2)");
    expect(Rational.of(3n, -6n).describe()).toBe("Rational(-1/2)");
    expect(Rational.of(0n, 5n).describe()).toBe("Rational(0/1)");
    expect(Rational.fromBasisPoints(250n).describe()).toBe("Rational(1/40)");
  });

  it("refuses a zero denominator and JavaScript numbers", () => {
    expect(thrownCode(() => Rational.of(1n, 0n))).toBe(ValueErrorCode.DIVISION_BY_ZERO);
    expect(thrownCode(() => Rational.of(0n, 1n).reciprocal())).toBe(ValueErrorCode.DIVISION_BY_ZERO);
    expect(thrownCode(() => Rational.of(1 as unknown as bigint))).toBe(ValueErrorCode.WRONG_TYPE);
  });

  it("never serialises into a payload", () => {
    expect(thrownCode(() => JSON.stringify({ factor: Rational.of(9n, 8n) }))).toBe(
      ValueErrorCode.IMPLICIT_CONVERSION,
    );
  });

  it("applies exactly when the product is whole and refuses loss under exact", () => {
    const bump = Rational.of(9n, 8n);
    expect(bump.applyTo(800n, "exact", "t")).toBe(900n);
    expect(thrownCode(() => bump.applyTo(801n, "exact", "t"))).toBe(ValueErrorCode.PRECISION_LOSS);
    expect(bump.applyTo(801n, "ceil", "t")).toBe(902n);
    expect(bump.applyTo(801n, "floor", "t")).toBe(901n);
  });

  it("compares by value regardless of representation", () => {
    expect(Rational.of(1n, 3n).compare(Rational.of(2n, 6n))).toBe(0);
    expect(Rational.of(-1n, 3n).compare(Rational.of(1n, 3n))).toBe(-1);
    expect(Rational.of(1n, 2n).compare(Rational.of(1n, 3n))).toBe(1);
  });

  it("times and reciprocal are exact: r × 1/r leaves any value unchanged", () => {
    const nonZero = fc.bigInt({ min: -1000n, max: 1000n }).filter((n) => n !== 0n);
    fc.assert(
      fc.property(nonZero, nonZero, smallOrAny, (n, d, units) => {
        const r = Rational.of(n, d);
        expect(r.times(r.reciprocal()).applyTo(units, "exact", "t")).toBe(units);
      }),
    );
  });

  it("applyTo is within one unit of the exact product", () => {
    fc.assert(
      fc.property(
        smallOrAny,
        fc.bigInt({ min: 1n, max: 10n ** 20n }),
        smallOrAny,
        inexactRoundingArb,
        (n, d, units, mode) => {
          const result = Rational.of(n, d).applyTo(units, mode, "t");
          const error = result * d - units * n;
          expect(error < d && error > -d).toBe(true);
        },
      ),
    );
  });
});
