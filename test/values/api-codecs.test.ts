import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { decimalCoefficient, decimalFromCoefficient } from "../../src/values/decimal.js";
import { gasPriceFromWei, gasPriceWeiPerGas } from "../../src/values/gas-price.js";
import {
  Decimal,
  decimalApi,
  decodeOrThrow,
  gasPriceApi,
  nativeValueApi,
  nativeWeiApi,
  TokenAmount,
  tokenAmountApi,
  tokenBaseUnitsApi,
  UINT256_MAX,
  ValueErrorCode,
} from "../../src/values/index.js";
import { nativeValueFromWei, nativeWei } from "../../src/values/native-value.js";
import { tokenAmountFromUnits, tokenUnits } from "../../src/values/token-amount.js";
import { assetArb, dai, issueCode, mainnet, polygon, signed, thrownCode, unsigned, usdc } from "./support.js";

const usdcCodec = tokenAmountApi(usdc);

describe("API decimal strings: precise refusals", () => {
  const cases: Array<[string, unknown, string]> = [
    ["empty", "", ValueErrorCode.EMPTY],
    ["exponent", "1e6", ValueErrorCode.EXPONENT_NOTATION],
    ["exponent with fraction and sign", "1.5E-3", ValueErrorCode.EXPONENT_NOTATION],
    ["too many decimals for USDC", "1250.5000001", ValueErrorCode.TOO_MANY_DECIMALS],
    ["trailing zeros beyond the asset's decimals", "1.0000000", ValueErrorCode.TOO_MANY_DECIMALS],
    ["negative", "-1250.5", ValueErrorCode.NEGATIVE],
    ["negative zero", "-0", ValueErrorCode.INVALID_DECIMAL],
    ["whitespace", " 1", ValueErrorCode.INVALID_DECIMAL],
    ["plus sign", "+1", ValueErrorCode.INVALID_DECIMAL],
    ["group separator", "1,000", ValueErrorCode.INVALID_DECIMAL],
    ["leading zero", "01", ValueErrorCode.INVALID_DECIMAL],
    ["bare leading dot", ".5", ValueErrorCode.INVALID_DECIMAL],
    ["trailing dot", "5.", ValueErrorCode.INVALID_DECIMAL],
    ["hex", "0x10", ValueErrorCode.INVALID_DECIMAL],
    ["NaN", "NaN", ValueErrorCode.INVALID_DECIMAL],
    ["Infinity", "Infinity", ValueErrorCode.INVALID_DECIMAL],
    ["too large", `1${"0".repeat(78)}`, ValueErrorCode.OUT_OF_RANGE],
    ["too large once scaled", (UINT256_MAX / 10n ** 5n).toString(), ValueErrorCode.OUT_OF_RANGE],
    ["absurdly long", "9".repeat(10_000), ValueErrorCode.OUT_OF_RANGE],
    ["a number", 1250.5, "invalid_type"],
  ];
  for (const [name, input, code] of cases) {
    it(`refuses ${name} with ${code}`, () => {
      expect(issueCode(usdcCodec.safeParse(input))).toBe(code);
    });
  }

  it("names the field, the value and the rule in the message", () => {
    const result = z.object({ amount: usdcCodec }).safeParse({ amount: "1.1234567" });
    expect(result.error?.issues[0]?.path).toEqual(["amount"]);
    expect(result.error?.issues[0]?.message).toBe(
      'USDC amount "1.1234567" has 7 decimals; at most 6 are allowed',
    );
    expect(result.error?.issues[0]?.message).toMatch(/USDC amount/);
  });

  it("accepts negatives only for a field declared signed", () => {
    const delta = tokenAmountApi(usdc, { allowNegative: true }).parse("-1250.5");
    expect(tokenUnits(delta)).toBe(-1_250_500_000n);
    expect(issueCode(z.safeEncode(usdcCodec, delta))).toBe(ValueErrorCode.NEGATIVE);
  });
});

describe("API integer strings", () => {
  const codec = tokenBaseUnitsApi(usdc);
  it("reads base units and refuses fractions and exponents", () => {
    expect(tokenUnits(codec.parse("1250500000"))).toBe(1_250_500_000n);
    expect(issueCode(codec.safeParse("1.0"))).toBe(ValueErrorCode.INVALID_INTEGER);
    expect(codec.safeParse("1.0").error?.issues[0]?.message).toMatch(/fraction is not allowed/);
    expect(issueCode(codec.safeParse("1e6"))).toBe(ValueErrorCode.EXPONENT_NOTATION);
    expect(issueCode(codec.safeParse("-5"))).toBe(ValueErrorCode.NEGATIVE);
    expect(issueCode(codec.safeParse((UINT256_MAX + 1n).toString()))).toBe(ValueErrorCode.OUT_OF_RANGE);
  });
});

describe("API round trips", () => {
  it("token decimal strings: decode(encode(x)) = x for any asset and amount", () => {
    fc.assert(
      fc.property(assetArb, unsigned, (asset, units) => {
        const codec = tokenAmountApi(asset);
        const amount = tokenAmountFromUnits(asset, units);
        const text = z.encode(codec, amount);
        expect(tokenUnits(codec.parse(text))).toBe(units);
        expect(z.encode(codec, codec.parse(text))).toBe(text); // canonical text is a fixed point
      }),
    );
  });

  it("signed token decimal strings and base-unit strings round trip", () => {
    fc.assert(
      fc.property(assetArb, signed, (asset, units) => {
        const amount = tokenAmountFromUnits(asset, units, { allowNegative: true });
        for (const codec of [
          tokenAmountApi(asset, { allowNegative: true }),
          tokenBaseUnitsApi(asset, { allowNegative: true }),
        ]) {
          expect(tokenUnits(codec.parse(z.encode(codec, amount)))).toBe(units);
        }
      }),
    );
  });

  it("native values and gas prices round trip in every unit", () => {
    fc.assert(
      fc.property(unsigned, (wei) => {
        for (const codec of [nativeValueApi(mainnet), nativeWeiApi(mainnet)]) {
          expect(nativeWei(codec.parse(z.encode(codec, nativeValueFromWei(mainnet, wei))))).toBe(wei);
        }
        for (const codec of [gasPriceApi(mainnet, "wei"), gasPriceApi(mainnet, "gwei")]) {
          expect(gasPriceWeiPerGas(codec.parse(z.encode(codec, gasPriceFromWei(mainnet, wei))))).toBe(wei);
        }
      }),
    );
  });

  it("decimals round trip at the field's scale", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }),
        fc.integer({ min: 0, max: 36 }),
        (coefficient, scale) => {
          const codec = decimalApi({ scale, allowNegative: true });
          const value = decimalFromCoefficient(coefficient, scale);
          const back = codec.parse(z.encode(codec, value));
          expect(decimalCoefficient(back)).toBe(coefficient);
          expect(back.scale).toBe(scale);
        },
      ),
    );
  });

  it("writes the shortest canonical string", () => {
    expect(z.encode(usdcCodec, TokenAmount.parse(usdc, "1250.50"))).toBe("1250.5");
    expect(z.encode(usdcCodec, TokenAmount.zero(usdc))).toBe("0");
    expect(z.encode(gasPriceApi(mainnet, "gwei"), gasPriceFromWei(mainnet, 1_500_000_000n))).toBe("1.5");
  });
});

describe("API encoding refusals", () => {
  it("refuses an amount of another asset or chain", () => {
    const daiAmount = TokenAmount.parse(dai, "1") as unknown as TokenAmount<typeof usdc.id>;
    expect(issueCode(z.safeEncode(usdcCodec, daiAmount))).toBe(ValueErrorCode.ASSET_MISMATCH);
    const pol = nativeValueFromWei(polygon, 1n) as never;
    expect(issueCode(z.safeEncode(nativeValueApi(mainnet), pol))).toBe(ValueErrorCode.CHAIN_MISMATCH);
    expect(issueCode(z.safeEncode(usdcCodec, "1" as never))).toBe(ValueErrorCode.WRONG_TYPE);
  });

  it("refuses to write a decimal finer than the field's scale", () => {
    const codec = decimalApi({ scale: 2 });
    expect(issueCode(z.safeEncode(codec, Decimal.parse("1.125", 3)))).toBe(ValueErrorCode.PRECISION_LOSS);
    expect(z.encode(codec, Decimal.parse("1.125", 3).rescale(2, "half-even"))).toBe("1.12");
    expect(z.encode(codec, Decimal.parse("1.5", 1))).toBe("1.5");
  });
});

describe("decodeOrThrow and documentation", () => {
  it("throws the first problem as a ValueError naming the field path", () => {
    const schema = z.object({ amount: usdcCodec });
    expect(thrownCode(() => decodeOrThrow(schema, { amount: "1e3" }, "body"))).toBe(
      ValueErrorCode.EXPONENT_NOTATION,
    );
    expect(() => decodeOrThrow(schema, { amount: "1e3" }, "body")).toThrow(/^body\.amount: /);
    expect(thrownCode(() => decodeOrThrow(schema, { amount: 5 }, "body"))).toBe(ValueErrorCode.WRONG_TYPE);
    expect(tokenUnits(decodeOrThrow(schema, { amount: "2" }, "body").amount)).toBe(2_000_000n);
  });

  it("documents the input as a string for OpenAPI", () => {
    const schema = z.toJSONSchema(usdcCodec, { io: "input" });
    expect(schema.type).toBe("string");
    expect(schema.description).toMatch(/at most 6 decimals/);
  });
});
