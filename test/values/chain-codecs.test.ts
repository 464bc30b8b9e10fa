import fc from "fast-check";
import { encodeAbiParameters, numberToHex } from "viem";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { gasPriceFromWei, gasPriceWeiPerGas } from "../../src/values/gas-price.js";
import {
  gasPriceRpc,
  gasPriceUint256,
  nativeValueRpc,
  nativeValueUint256,
  TokenAmount,
  tokenAmountAbiWord,
  tokenAmountUint256,
  UINT256_MAX,
  ValueErrorCode,
} from "../../src/values/index.js";
import { nativeValueFromWei, nativeWei } from "../../src/values/native-value.js";
import { tokenAmountFromUnits, tokenUnits } from "../../src/values/token-amount.js";
import { issueCode, mainnet, polygon, unsigned, usdc } from "./support.js";

describe("hex quantities", () => {
  it("round trip native values and gas prices, written exactly as viem writes them", () => {
    fc.assert(
      fc.property(unsigned, (wei) => {
        const native = nativeValueRpc(mainnet);
        const hex = z.encode(native, nativeValueFromWei(mainnet, wei));
        expect(hex).toBe(numberToHex(wei));
        expect(nativeWei(native.parse(hex))).toBe(wei);
        const gas = gasPriceRpc(mainnet);
        expect(gasPriceWeiPerGas(gas.parse(z.encode(gas, gasPriceFromWei(mainnet, wei))))).toBe(wei);
      }),
    );
  });

  it("binds the decoded value to the codec's chain", () => {
    expect(nativeValueRpc(polygon).parse("0x1").chain.id).toBe(137);
    expect(gasPriceRpc(mainnet).parse("0x3b9aca00").chain.id).toBe(1);
  });

  it("accepts leading zeros and upper case, refuses anything else", () => {
    const codec = gasPriceRpc(mainnet);
    expect(gasPriceWeiPerGas(codec.parse("0x003B9ACA00"))).toBe(1_000_000_000n);
    expect(issueCode(codec.safeParse("0x"))).toBe(ValueErrorCode.INVALID_HEX);
    expect(issueCode(codec.safeParse("3b9aca00"))).toBe(ValueErrorCode.INVALID_HEX);
    expect(issueCode(codec.safeParse("0xZZ"))).toBe(ValueErrorCode.INVALID_HEX);
    expect(issueCode(codec.safeParse(`0x1${"0".repeat(64)}`))).toBe(ValueErrorCode.OUT_OF_RANGE);
    expect(issueCode(codec.safeParse(1_000_000_000))).toBe(ValueErrorCode.WRONG_TYPE);
  });

  it("refuses to encode a value of another chain", () => {
    expect(issueCode(z.safeEncode(nativeValueRpc(mainnet), nativeValueFromWei(polygon, 1n) as never))).toBe(
      ValueErrorCode.CHAIN_MISMATCH,
    );
    expect(issueCode(z.safeEncode(gasPriceRpc(polygon), gasPriceFromWei(mainnet, 1n) as never))).toBe(
      ValueErrorCode.CHAIN_MISMATCH,
    );
  });
});

describe("viem uint256 bigints", () => {
  it("round trip and stay inside uint256", () => {
    fc.assert(
      fc.property(unsigned, (value) => {
        expect(z.encode(nativeValueUint256(mainnet), nativeValueFromWei(mainnet, value))).toBe(value);
        expect(gasPriceWeiPerGas(gasPriceUint256(mainnet).parse(value))).toBe(value);
        expect(tokenUnits(tokenAmountUint256(usdc).parse(value))).toBe(value);
      }),
    );
    expect(issueCode(tokenAmountUint256(usdc).safeParse(-1n))).toBe(ValueErrorCode.NEGATIVE);
    expect(issueCode(tokenAmountUint256(usdc).safeParse(UINT256_MAX + 1n))).toBe(ValueErrorCode.OUT_OF_RANGE);
    expect(issueCode(nativeValueUint256(mainnet).safeParse(1))).toBe(ValueErrorCode.WRONG_TYPE);
  });

  it("refuses to put a negative delta on chain", () => {
    const delta = TokenAmount.parse(usdc, "-1", { allowNegative: true });
    expect(issueCode(z.safeEncode(tokenAmountUint256(usdc), delta))).toBe(ValueErrorCode.NEGATIVE);
    expect(issueCode(z.safeEncode(tokenAmountAbiWord(usdc), delta))).toBe(ValueErrorCode.NEGATIVE);
  });
});

describe("ABI words", () => {
  const codec = tokenAmountAbiWord(usdc);

  it("round trip through viem's uint256 ABI encoding", () => {
    fc.assert(
      fc.property(unsigned, (units) => {
        const word = z.encode(codec, tokenAmountFromUnits(usdc, units));
        expect(word).toBe(encodeAbiParameters([{ type: "uint256" }], [units]));
        expect(tokenUnits(codec.parse(word))).toBe(units);
      }),
    );
  });

  it("refuses anything but exactly one 32-byte word", () => {
    expect(issueCode(codec.safeParse("0x01"))).toBe(ValueErrorCode.INVALID_HEX);
    expect(issueCode(codec.safeParse(`0x${"00".repeat(64)}`))).toBe(ValueErrorCode.INVALID_HEX);
    expect(issueCode(codec.safeParse(`0x${"zz".repeat(32)}`))).toBe(ValueErrorCode.INVALID_HEX);
  });
});
