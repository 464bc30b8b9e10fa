import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValueErrorCode } from "../../src/values/errors.js";
import { divideRounded, pow10, type RoundingMode, rescaleUnits } from "../../src/values/rounding.js";
import { inexactRoundingArb, smallOrAny, thrownCode } from "./support.js";

// The table from the Java BigDecimal RoundingMode documentation: an oracle independent of our code.
// Inputs are tenths: 55 means 5.5.
const JAVA_TABLE: Array<[bigint, Record<Exclude<RoundingMode, "exact">, bigint>]> = [
  [55n, { up: 6n, down: 5n, ceil: 6n, floor: 5n, "half-up": 6n, "half-down": 5n, "half-even": 6n }],
  [25n, { up: 3n, down: 2n, ceil: 3n, floor: 2n, "half-up": 3n, "half-down": 2n, "half-even": 2n }],
  [16n, { up: 2n, down: 1n, ceil: 2n, floor: 1n, "half-up": 2n, "half-down": 2n, "half-even": 2n }],
  [11n, { up: 2n, down: 1n, ceil: 2n, floor: 1n, "half-up": 1n, "half-down": 1n, "half-even": 1n }],
  [10n, { up: 1n, down: 1n, ceil: 1n, floor: 1n, "half-up": 1n, "half-down": 1n, "half-even": 1n }],
  [-10n, { up: -1n, down: -1n, ceil: -1n, floor: -1n, "half-up": -1n, "half-down": -1n, "half-even": -1n }],
  [-11n, { up: -2n, down: -1n, ceil: -1n, floor: -2n, "half-up": -1n, "half-down": -1n, "half-even": -1n }],
  [-16n, { up: -2n, down: -1n, ceil: -1n, floor: -2n, "half-up": -2n, "half-down": -2n, "half-even": -2n }],
  [-25n, { up: -3n, down: -2n, ceil: -2n, floor: -3n, "half-up": -3n, "half-down": -2n, "half-even": -2n }],
  [-55n, { up: -6n, down: -5n, ceil: -5n, floor: -6n, "half-up": -6n, "half-down": -5n, "half-even": -6n }],
];

describe("divideRounded", () => {
  for (const [tenths, expected] of JAVA_TABLE) {
    for (const [mode, result] of Object.entries(expected)) {
      it(`rounds ${tenths}/10 with ${mode} to ${result}`, () => {
        expect(divideRounded(tenths, 10n, mode as RoundingMode, "test")).toBe(result);
      });
    }
  }

  it("refuses an inexact result under exact, and accepts an exact one", () => {
    expect(thrownCode(() => divideRounded(55n, 10n, "exact", "test"))).toBe(ValueErrorCode.PRECISION_LOSS);
    expect(divideRounded(-10n, 10n, "exact", "test")).toBe(-1n);
  });

  it("names the operation in the precision-loss message", () => {
    expect(() => divideRounded(1n, 3n, "exact", "rescale USDC to 2 decimals")).toThrow(
      /rescale USDC to 2 decimals/,
    );
  });

  it("refuses a zero denominator and an unknown rounding mode", () => {
    expect(thrownCode(() => divideRounded(1n, 0n, "floor", "t"))).toBe(ValueErrorCode.DIVISION_BY_ZERO);
    expect(thrownCode(() => divideRounded(1n, 2n, "nearest" as RoundingMode, "t"))).toBe(
      ValueErrorCode.INVALID_ROUNDING_MODE,
    );
  });

  it("treats a negative denominator like a negated numerator", () => {
    fc.assert(
      fc.property(smallOrAny, fc.bigInt({ min: 1n, max: 1000n }), inexactRoundingArb, (n, d, mode) => {
        expect(divideRounded(n, -d, mode, "t")).toBe(divideRounded(-n, d, mode, "t"));
      }),
    );
  });

  it("lands within one unit of the exact quotient, on the side each mode promises", () => {
    fc.assert(
      fc.property(smallOrAny, fc.bigInt({ min: 1n, max: 10n ** 30n }), inexactRoundingArb, (n, d, mode) => {
        const r = divideRounded(n, d, mode, "t");
        const error = r * d - n; // sign tells which side of n/d the result is on
        expect(error < d && error > -d).toBe(true);
        if (mode === "floor") expect(error <= 0n).toBe(true);
        if (mode === "ceil") expect(error >= 0n).toBe(true);
        if (mode === "down") expect(r * d * (n < 0n ? -1n : 1n) <= (n < 0n ? -n : n)).toBe(true);
        if (mode.startsWith("half")) expect(2n * (error < 0n ? -error : error) <= d).toBe(true);
        if (mode === "half-even" && 2n * (error < 0n ? -error : error) === d) expect(r % 2n).toBe(0n);
      }),
    );
  });

  it("is odd-symmetric for the symmetric modes", () => {
    const symmetric = fc.constantFrom<RoundingMode>("down", "up", "half-up", "half-down", "half-even");
    fc.assert(
      fc.property(smallOrAny, fc.bigInt({ min: 1n, max: 1000n }), symmetric, (n, d, mode) => {
        expect(divideRounded(-n, d, mode, "t")).toBe(-divideRounded(n, d, mode, "t"));
      }),
    );
  });
});

describe("rescaleUnits", () => {
  it("widens exactly and narrows back exactly", () => {
    fc.assert(
      fc.property(
        smallOrAny,
        fc.integer({ min: 0, max: 18 }),
        fc.integer({ min: 0, max: 18 }),
        (units, from, extra) => {
          const wide = rescaleUnits(units, from, from + extra, "exact", "t");
          expect(wide).toBe(units * pow10(extra));
          expect(rescaleUnits(wide, from + extra, from, "exact", "t")).toBe(units);
        },
      ),
    );
  });

  it("rounds at the exact half boundary by mode", () => {
    // 1.005 at 3 decimals to 2 decimals.
    expect(rescaleUnits(1005n, 3, 2, "half-even", "t")).toBe(100n);
    expect(rescaleUnits(1015n, 3, 2, "half-even", "t")).toBe(102n);
    expect(rescaleUnits(1005n, 3, 2, "half-up", "t")).toBe(101n);
    expect(rescaleUnits(1005n, 3, 2, "half-down", "t")).toBe(100n);
    expect(rescaleUnits(1004n, 3, 2, "ceil", "t")).toBe(101n);
    expect(thrownCode(() => rescaleUnits(1005n, 3, 2, "exact", "t"))).toBe(ValueErrorCode.PRECISION_LOSS);
  });

  it("refuses a target scale outside 0..36", () => {
    expect(thrownCode(() => rescaleUnits(1n, 0, 37, "exact", "t"))).toBe(ValueErrorCode.INVALID_SCALE);
    expect(thrownCode(() => rescaleUnits(1n, 0, 1.5, "exact", "t"))).toBe(ValueErrorCode.INVALID_SCALE);
  });
});

describe("rescaleUnits without a mode", () => {
  it("refuses a missing mode even when widening would be exact", () => {
    expect(thrownCode(() => rescaleUnits(1n, 0, 2, undefined as unknown as RoundingMode, "t"))).toBe(
      ValueErrorCode.INVALID_ROUNDING_MODE,
    );
  });
});
