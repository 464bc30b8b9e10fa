import { describe, expect, it } from "vitest";
import {
  Decimal,
  GasPrice,
  NativeValue,
  Rational,
  TokenAmount,
  ValueErrorCode,
} from "../../src/values/index.js";
import { dai, mainnet, polygon, thrownCode, usdc } from "./support.js";

/**
 * Every `@ts-expect-error` below is checked by `npm run typecheck`: if a line stops being a type
 * error, tsc fails on the unused directive. Each line also runs, proving the runtime refusal.
 */
describe("compile-time and runtime separation", () => {
  const usdcAmount = TokenAmount.parse(usdc, "1");
  const daiAmount = TokenAmount.parse(dai, "1");
  const ethValue = NativeValue.parse(mainnet, "1");
  const polValue = NativeValue.parse(polygon, "1");
  const ethGas = GasPrice.parse(mainnet, "1", "gwei");
  const polGas = GasPrice.parse(polygon, "1", "gwei");

  it("cannot add, subtract or compare amounts of two assets", () => {
    // @ts-expect-error TokenAmount<dai> is not a TokenAmount<usdc>
    expect(thrownCode(() => usdcAmount.plus(daiAmount))).toBe(ValueErrorCode.ASSET_MISMATCH);
    // @ts-expect-error TokenAmount<dai> is not a TokenAmount<usdc>
    expect(thrownCode(() => usdcAmount.minus(daiAmount))).toBe(ValueErrorCode.ASSET_MISMATCH);
    // @ts-expect-error TokenAmount<dai> is not a TokenAmount<usdc>
    expect(thrownCode(() => usdcAmount.compare(daiAmount))).toBe(ValueErrorCode.ASSET_MISMATCH);
  });

  it("cannot mix native values or gas prices of two chains", () => {
    // @ts-expect-error NativeValue<137> is not a NativeValue<1>
    expect(thrownCode(() => ethValue.plus(polValue))).toBe(ValueErrorCode.CHAIN_MISMATCH);
    // @ts-expect-error GasPrice<137> is not a GasPrice<1>
    expect(thrownCode(() => ethGas.plus(polGas))).toBe(ValueErrorCode.CHAIN_MISMATCH);
    // @ts-expect-error GasPrice<137> is not a GasPrice<1>
    expect(thrownCode(() => ethGas.compare(polGas))).toBe(ValueErrorCode.CHAIN_MISMATCH);
  });

  it("cannot mix kinds", () => {
    // @ts-expect-error a NativeValue is not a GasPrice
    expect(() => ethGas.plus(ethValue)).toThrow();
    // @ts-expect-error a TokenAmount is not a NativeValue
    expect(() => ethValue.plus(usdcAmount)).toThrow();
  });

  it("cannot build amounts or factors from JavaScript numbers", () => {
    // @ts-expect-error amounts are never JavaScript numbers
    expect(thrownCode(() => TokenAmount.parse(usdc, 1.5))).toBe(ValueErrorCode.WRONG_TYPE);
    // @ts-expect-error factors take bigints
    expect(thrownCode(() => Rational.of(1, 3))).toBe(ValueErrorCode.WRONG_TYPE);
  });

  it("cannot scale without naming a rounding mode", () => {
    // @ts-expect-error the rounding mode is required
    expect(thrownCode(() => usdcAmount.times(Rational.of(1n, 3n)))).toBe(
      ValueErrorCode.INVALID_ROUNDING_MODE,
    );
    // @ts-expect-error the rounding mode is required
    expect(thrownCode(() => Decimal.parse("1.25", 2).rescale(1))).toBe(ValueErrorCode.INVALID_ROUNDING_MODE);
    // @ts-expect-error "nearest" is not a rounding mode
    expect(thrownCode(() => Decimal.parse("1.25", 2).rescale(1, "nearest"))).toBe(
      ValueErrorCode.INVALID_ROUNDING_MODE,
    );
  });

  it("cannot read the raw scalar", () => {
    // @ts-expect-error the base units are private
    expect(usdcAmount.units).toBeUndefined();
    expect(Object.keys(usdcAmount)).toEqual(["asset"]);
    expect(Object.keys(ethValue)).toEqual(["chain"]);
  });
});
