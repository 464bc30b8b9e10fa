import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { gasPriceFromWei, gasPriceWeiPerGas } from "../../src/values/gas-price.js";
import { GasPrice, NativeValue, Rational, UINT256_MAX, ValueErrorCode } from "../../src/values/index.js";
import { nativeValueFromWei, nativeWei } from "../../src/values/native-value.js";
import { mainnet, polygon, thrownCode } from "./support.js";

const weiArb = fc.bigInt({ min: 0n, max: 10n ** 30n });

describe("NativeValue", () => {
  it("adds, subtracts and compares on one chain", () => {
    fc.assert(
      fc.property(weiArb, weiArb, (a, b) => {
        const x = nativeValueFromWei(mainnet, a);
        const y = nativeValueFromWei(mainnet, b);
        expect(nativeWei(x.plus(y))).toBe(a + b);
        expect(x.plus(y).minus(y).equals(x)).toBe(true);
        expect(x.compare(y)).toBe(a < b ? -1 : a > b ? 1 : 0);
      }),
    );
  });

  it("never goes negative or above uint256", () => {
    const one = NativeValue.parse(mainnet, "1");
    expect(thrownCode(() => NativeValue.zero(mainnet).minus(one))).toBe(ValueErrorCode.NEGATIVE);
    expect(
      thrownCode(() => nativeValueFromWei(mainnet, UINT256_MAX).plus(nativeValueFromWei(mainnet, 1n))),
    ).toBe(ValueErrorCode.OUT_OF_RANGE);
    expect(thrownCode(() => NativeValue.parse(mainnet, "-1"))).toBe(ValueErrorCode.NEGATIVE);
  });

  it("refuses values of another chain at runtime", () => {
    const eth = NativeValue.parse(mainnet, "1") as NativeValue;
    const pol = NativeValue.parse(polygon, "1") as NativeValue;
    expect(thrownCode(() => eth.plus(pol))).toBe(ValueErrorCode.CHAIN_MISMATCH);
    expect(thrownCode(() => eth.minus(pol))).toBe(ValueErrorCode.CHAIN_MISMATCH);
    expect(thrownCode(() => eth.compare(pol))).toBe(ValueErrorCode.CHAIN_MISMATCH);
  });

  it("parses whole coins at the chain's native decimals and scales by a factor", () => {
    const value = NativeValue.parse(mainnet, "0.05");
    expect(nativeWei(value)).toBe(50_000_000_000_000_000n);
    expect(nativeWei(value.times(Rational.of(1n, 3n), "floor"))).toBe(16_666_666_666_666_666n);
    expect(thrownCode(() => value.times(Rational.of(1n, 3n), "exact"))).toBe(ValueErrorCode.PRECISION_LOSS);
  });

  it("refuses a malformed chain descriptor", () => {
    const broken = { id: 0, nativeCurrency: { symbol: "X", decimals: 18 } };
    expect(thrownCode(() => NativeValue.zero(broken))).toBe(ValueErrorCode.INVALID_CHAIN);
    const badDecimals = { id: 5, nativeCurrency: { symbol: "X", decimals: 99 } };
    expect(thrownCode(() => NativeValue.zero(badDecimals))).toBe(ValueErrorCode.INVALID_CHAIN);
  });
});

describe("GasPrice", () => {
  it("parses wei and gwei, and only in the unit named", () => {
    expect(gasPriceWeiPerGas(GasPrice.parse(mainnet, "1.5", "gwei"))).toBe(1_500_000_000n);
    expect(gasPriceWeiPerGas(GasPrice.parse(mainnet, "1500000000", "wei"))).toBe(1_500_000_000n);
    expect(thrownCode(() => GasPrice.parse(mainnet, "1.5", "wei"))).toBe(ValueErrorCode.INVALID_INTEGER);
    expect(thrownCode(() => GasPrice.parse(mainnet, "0.0000000001", "gwei"))).toBe(
      ValueErrorCode.TOO_MANY_DECIMALS,
    );
  });

  it("prices gas into a native value on the same chain", () => {
    const price = GasPrice.parse(mainnet, "30", "gwei");
    const fee = price.costFor(21_000n);
    expect(nativeWei(fee)).toBe(630_000_000_000_000n);
    expect(fee.chain.id).toBe(1);
    expect(thrownCode(() => price.costFor(-1n))).toBe(ValueErrorCode.NEGATIVE);
    expect(thrownCode(() => price.costFor(21_000 as unknown as bigint))).toBe(ValueErrorCode.WRONG_TYPE);
    expect(thrownCode(() => gasPriceFromWei(mainnet, UINT256_MAX).costFor(2n))).toBe(
      ValueErrorCode.OUT_OF_RANGE,
    );
    // A zero price must not launder a gas count that is itself out of range.
    expect(thrownCode(() => GasPrice.zero(mainnet).costFor(-1n))).toBe(ValueErrorCode.NEGATIVE);
    expect(thrownCode(() => GasPrice.zero(mainnet).costFor(UINT256_MAX + 1n))).toBe(
      ValueErrorCode.OUT_OF_RANGE,
    );
  });

  it("bumps by an exact factor rounding up, and sums base and priority fees", () => {
    const base = GasPrice.parse(mainnet, "10.000000001", "gwei");
    expect(gasPriceWeiPerGas(base.times(Rational.of(9n, 8n), "ceil"))).toBe(11_250_000_002n);
    const tip = GasPrice.parse(mainnet, "2", "gwei");
    expect(gasPriceWeiPerGas(base.plus(tip))).toBe(12_000_000_001n);
    expect(thrownCode(() => tip.minus(base))).toBe(ValueErrorCode.NEGATIVE);
  });

  it("refuses a gas price of another chain at runtime", () => {
    const eth = GasPrice.parse(mainnet, "1", "gwei") as GasPrice;
    const pol = GasPrice.parse(polygon, "1", "gwei") as GasPrice;
    expect(thrownCode(() => eth.plus(pol))).toBe(ValueErrorCode.CHAIN_MISMATCH);
    expect(thrownCode(() => eth.compare(pol))).toBe(ValueErrorCode.CHAIN_MISMATCH);
    expect(() => eth.plus(pol)).toThrow(/gas price of chain 137 with one of chain 1/);
  });
});
