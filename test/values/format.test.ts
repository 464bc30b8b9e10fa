import { describe, expect, it } from "vitest";
import { gasPriceFromWei } from "../../src/values/gas-price.js";
import {
  Decimal,
  formatDecimal,
  formatGasPrice,
  formatNativeValue,
  formatTokenAmount,
  NativeValue,
  TokenAmount,
  ValueErrorCode,
} from "../../src/values/index.js";
import { mainnet, thrownCode, usdc } from "./support.js";

describe("human formatting", () => {
  const amount = TokenAmount.parse(usdc, "1234567.5");

  it("groups the whole part and appends the symbol by default", () => {
    expect(formatTokenAmount(amount)).toBe("1,234,567.5 USDC");
    expect(formatTokenAmount(TokenAmount.parse(usdc, "999"))).toBe("999 USDC");
    expect(formatTokenAmount(TokenAmount.parse(usdc, "-1000", { allowNegative: true }))).toBe("-1,000 USDC");
  });

  it("honours grouping, separators, symbol and minimum fraction digits", () => {
    expect(formatTokenAmount(amount, { grouping: false, symbol: false })).toBe("1234567.5");
    expect(formatTokenAmount(amount, { groupSeparator: ".", decimalSeparator: "," })).toBe(
      "1.234.567,5 USDC",
    );
    expect(formatTokenAmount(amount, { minFractionDigits: 2 })).toBe("1,234,567.50 USDC");
    expect(formatTokenAmount(TokenAmount.zero(usdc), { minFractionDigits: 2 })).toBe("0.00 USDC");
    expect(formatTokenAmount(TokenAmount.zero(usdc), { minFractionDigits: 9 })).toBe("0.000000 USDC");
  });

  it("shortens only with a named rounding mode", () => {
    const value = TokenAmount.parse(usdc, "0.125");
    expect(formatTokenAmount(value, { maxFractionDigits: { digits: 2, rounding: "half-even" } })).toBe(
      "0.12 USDC",
    );
    expect(formatTokenAmount(value, { maxFractionDigits: { digits: 2, rounding: "half-up" } })).toBe(
      "0.13 USDC",
    );
    expect(
      thrownCode(() => formatTokenAmount(value, { maxFractionDigits: { digits: 2, rounding: "exact" } })),
    ).toBe(ValueErrorCode.PRECISION_LOSS);
  });

  it("formats native values, gas prices and decimals", () => {
    expect(formatNativeValue(NativeValue.parse(mainnet, "0.05"))).toBe("0.05 ETH");
    expect(formatGasPrice(gasPriceFromWei(mainnet, 1_500_000_000n), "gwei")).toBe("1.5 gwei");
    expect(formatGasPrice(gasPriceFromWei(mainnet, 1_500_000_000n), "wei")).toBe("1,500,000,000 wei");
    expect(formatDecimal(Decimal.parse("12345.0825", 4))).toBe("12,345.0825");
  });
});
