import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import * as values from "../../src/values/index.js";
import {
  Decimal,
  GasPrice,
  NativeValue,
  Rational,
  TokenAmount,
  ValueError,
  ValueErrorCode,
} from "../../src/values/index.js";
import { mainnet, thrownCode, usdc } from "./support.js";

const samples = () => [
  TokenAmount.parse(usdc, "1250.5"),
  NativeValue.parse(mainnet, "0.05"),
  GasPrice.parse(mainnet, "30", "gwei"),
  Decimal.parse("1.0825", 4),
  Rational.of(9n, 8n),
];

describe("opaque values", () => {
  it("refuse implicit JSON serialisation, which would silently write {}", () => {
    for (const value of samples()) {
      expect(thrownCode(() => JSON.stringify({ value }))).toBe(ValueErrorCode.IMPLICIT_CONVERSION);
    }
  });

  it("refuse numeric coercion and relational operators", () => {
    const [a, b] = [TokenAmount.parse(usdc, "1"), TokenAmount.parse(usdc, "2")];
    expect(thrownCode(() => +(a as unknown as number))).toBe(ValueErrorCode.IMPLICIT_CONVERSION);
    expect(thrownCode(() => (a as unknown as number) < (b as unknown as number))).toBe(
      ValueErrorCode.IMPLICIT_CONVERSION,
    );
    expect(thrownCode(() => (a as unknown as number) + (b as unknown as number))).toBe(
      ValueErrorCode.IMPLICIT_CONVERSION,
    );
  });

  it("describe themselves for debugging without exposing a boundary shape", () => {
    const amount = TokenAmount.parse(usdc, "1250.5");
    expect(`${amount}`).toBe(`TokenAmount(${usdc.id} 1250.5)`);
    expect(inspect(amount)).toBe(`TokenAmount(${usdc.id} 1250.5)`);
    expect(`${GasPrice.parse(mainnet, "30", "gwei")}`).toBe("GasPrice(chain 1 30 gwei)");
    expect(`${NativeValue.parse(mainnet, "0.05")}`).toBe("NativeValue(chain 1 0.05 ETH)");
    expect(`${Decimal.parse("1.5", 4)}`).toBe("Decimal(1.5 @4)");
  });

  it("raise ValueErrors that are TenorErrors with stable codes and no retry", () => {
    try {
      TokenAmount.parse(usdc, "1e3");
    } catch (error) {
      expect(error).toBeInstanceOf(ValueError);
      expect((error as ValueError).toJSON()).toMatchObject({
        code: "VALUE_EXPONENT_NOTATION",
        retryable: false,
      });
      expect(values.isValueError(error, ValueErrorCode.EXPONENT_NOTATION)).toBe(true);
      return;
    }
    expect.unreachable();
  });

  it("keep the raw-scalar accessors out of the public index", () => {
    const exported = Object.keys(values);
    for (const internal of [
      "tokenUnits",
      "tokenAmountFromUnits",
      "nativeWei",
      "nativeValueFromWei",
      "gasPriceWeiPerGas",
      "gasPriceFromWei",
      "decimalCoefficient",
      "decimalFromCoefficient",
    ]) {
      expect(exported).not.toContain(internal);
    }
    expect(exported).toContain("TokenAmount");
  });

  it("keep every error code in one namespace with the VALUE_ prefix", () => {
    const codes = Object.values(ValueErrorCode);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toMatch(/^VALUE_[A-Z0-9_]+$/);
  });
});
