import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Decimal, Rational, TokenAmount, UINT256_MAX, ValueErrorCode } from "../../src/values/index.js";
import { tokenAmountFromUnits, tokenUnits } from "../../src/values/token-amount.js";
import { dai, inexactRoundingArb, thrownCode, usdc, wbtc } from "./support.js";

const amountArb = fc.bigInt({ min: 0n, max: 10n ** 40n }).map((units) => tokenAmountFromUnits(usdc, units));
const deltaArb = fc
  .bigInt({ min: -(10n ** 40n), max: 10n ** 40n })
  .map((units) => tokenAmountFromUnits(usdc, units, { allowNegative: true }));

describe("TokenAmount arithmetic", () => {
  it("is a commutative monoid under plus with zero as identity", () => {
    fc.assert(
      fc.property(amountArb, amountArb, amountArb, (a, b, c) => {
        expect(a.plus(b).equals(b.plus(a))).toBe(true);
        expect(
          a
            .plus(b)
            .plus(c)
            .equals(a.plus(b.plus(c))),
        ).toBe(true);
        expect(a.plus(TokenAmount.zero(usdc)).equals(a)).toBe(true);
      }),
    );
  });

  it("minus undoes plus, and compare agrees with the sign of the difference", () => {
    fc.assert(
      fc.property(deltaArb, deltaArb, (a, b) => {
        expect(a.plus(b).minus(b, { allowNegative: true }).equals(a)).toBe(true);
        const difference = a.minus(b, { allowNegative: true });
        expect(a.compare(b)).toBe(difference.isNegative() ? -1 : difference.isZero() ? 0 : 1);
        // Antisymmetric; summed, since -0 and 0 differ to toBe when a equals b.
        expect(b.compare(a) + a.compare(b)).toBe(0);
      }),
    );
  });

  it("refuses a negative difference unless the caller allows a delta", () => {
    const small = TokenAmount.parse(usdc, "1");
    const large = TokenAmount.parse(usdc, "2");
    expect(thrownCode(() => small.minus(large))).toBe(ValueErrorCode.NEGATIVE);
    const delta = small.minus(large, { allowNegative: true });
    expect(delta.isNegative()).toBe(true);
    expect(delta.describe()).toBe(`TokenAmount(${usdc.id} -1)`);
  });

  it("refuses to leave the uint256 magnitude range", () => {
    const max = tokenAmountFromUnits(usdc, UINT256_MAX);
    expect(thrownCode(() => max.plus(tokenAmountFromUnits(usdc, 1n)))).toBe(ValueErrorCode.OUT_OF_RANGE);
    expect(thrownCode(() => tokenAmountFromUnits(usdc, UINT256_MAX + 1n))).toBe(ValueErrorCode.OUT_OF_RANGE);
    expect(thrownCode(() => tokenAmountFromUnits(usdc, -1n))).toBe(ValueErrorCode.NEGATIVE);
    expect(thrownCode(() => tokenAmountFromUnits(usdc, 5 as unknown as bigint))).toBe(
      ValueErrorCode.WRONG_TYPE,
    );
  });

  it("refuses mixing assets at runtime, including the same id at another scale", () => {
    const a = TokenAmount.parse(usdc, "1") as TokenAmount<string>;
    const b = TokenAmount.parse(dai, "1") as TokenAmount<string>;
    const rescaled = TokenAmount.zero({ ...usdc, decimals: 18 }) as TokenAmount<string>;
    for (const other of [b, rescaled]) {
      expect(thrownCode(() => a.plus(other))).toBe(ValueErrorCode.ASSET_MISMATCH);
      expect(thrownCode(() => a.minus(other))).toBe(ValueErrorCode.ASSET_MISMATCH);
      expect(thrownCode(() => a.compare(other))).toBe(ValueErrorCode.ASSET_MISMATCH);
      expect(thrownCode(() => a.equals(other))).toBe(ValueErrorCode.ASSET_MISMATCH);
    }
    expect(() => a.plus(b)).toThrow(/cannot add .*0x6b17.* with .*0xa0b8/);
  });

  it("sums a list of the same asset", () => {
    const parts = ["1.5", "2.25", "0.000001"].map((text) => TokenAmount.parse(usdc, text));
    expect(tokenUnits(TokenAmount.sum(usdc, parts))).toBe(3_750_001n);
    expect(TokenAmount.sum(usdc, []).isZero()).toBe(true);
  });
});

describe("TokenAmount scaling", () => {
  it("multiplies by an exact factor with a named rounding mode", () => {
    const amount = TokenAmount.parse(usdc, "100.000001");
    const fee = Rational.fromBasisPoints(30n); // 0.3 %
    expect(thrownCode(() => amount.times(fee, "exact"))).toBe(ValueErrorCode.PRECISION_LOSS);
    expect(tokenUnits(amount.times(fee, "floor"))).toBe(300_000n);
    expect(tokenUnits(amount.times(fee, "ceil"))).toBe(300_001n);
    expect(thrownCode(() => amount.times(Rational.of(-1n), "exact"))).toBe(ValueErrorCode.NEGATIVE);
    expect(amount.times(Rational.of(-1n), "exact", { allowNegative: true }).isNegative()).toBe(true);
  });

  it("splits a share of at most 100 % and its remainder without creating or losing units", () => {
    fc.assert(
      fc.property(
        amountArb,
        fc.bigInt({ min: 0n, max: 10_000n }),
        inexactRoundingArb,
        (amount, bps, mode) => {
          const share = amount.times(Rational.fromBasisPoints(bps), mode);
          const rest = amount.minus(share);
          expect(share.plus(rest).equals(amount)).toBe(true);
        },
      ),
    );
  });

  it("converts between scales 1:1: widening is exact, narrowing needs a rounding mode", () => {
    const usdc18 = { id: "bsc-usdc", decimals: 18, symbol: "USDC" } as const;
    const amount = TokenAmount.parse(usdc, "1250.5");
    const wide = amount.convertAt(Decimal.ONE, usdc18, "exact");
    expect(tokenUnits(wide)).toBe(1_250_500_000_000_000_000_000n);
    expect(tokenUnits(wide.convertAt(Decimal.ONE, usdc, "exact"))).toBe(1_250_500_000n);
    const dust = TokenAmount.parse(usdc18, "0.0000001");
    expect(thrownCode(() => dust.convertAt(Decimal.ONE, usdc, "exact"))).toBe(ValueErrorCode.PRECISION_LOSS);
    expect(tokenUnits(dust.convertAt(Decimal.ONE, usdc, "ceil"))).toBe(1n);
  });

  it("converts into another asset at a decimal rate", () => {
    const btc = TokenAmount.parse(wbtc, "0.5");
    const price = Decimal.parse("64250.125", 6); // USDC per WBTC
    expect(tokenUnits(btc.convertAt(price, usdc, "exact"))).toBe(32_125_062_500n);
    expect(
      thrownCode(() =>
        TokenAmount.parse(wbtc, "0.00000001").convertAt(Decimal.parse("0.0000001", 7), usdc, "exact"),
      ),
    ).toBe(ValueErrorCode.PRECISION_LOSS);
  });
});

describe("TokenAmount.parse", () => {
  it("reads the API grammar at the asset's decimals", () => {
    expect(tokenUnits(TokenAmount.parse(usdc, "1250.50"))).toBe(1_250_500_000n);
    expect(thrownCode(() => TokenAmount.parse(usdc, "0.0000001"))).toBe(ValueErrorCode.TOO_MANY_DECIMALS);
    expect(thrownCode(() => TokenAmount.parse(usdc, "-1"))).toBe(ValueErrorCode.NEGATIVE);
    expect(TokenAmount.parse(usdc, "-1", { allowNegative: true }).isNegative()).toBe(true);
  });

  it("refuses a malformed asset descriptor", () => {
    expect(thrownCode(() => TokenAmount.zero({ id: "bad id", decimals: 6, symbol: "X" }))).toBe(
      ValueErrorCode.INVALID_ASSET,
    );
    expect(thrownCode(() => TokenAmount.zero({ id: "x", decimals: 37, symbol: "X" }))).toBe(
      ValueErrorCode.INVALID_ASSET,
    );
    expect(thrownCode(() => TokenAmount.zero({ id: "x", decimals: 1.5, symbol: "X" }))).toBe(
      ValueErrorCode.INVALID_ASSET,
    );
    expect(thrownCode(() => TokenAmount.zero({ id: "x", decimals: 6, symbol: " " }))).toBe(
      ValueErrorCode.INVALID_ASSET,
    );
  });
});
