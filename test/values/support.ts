import fc from "fast-check";
import { mainnet, polygon } from "viem/chains";
import { expect } from "vitest";
import type { z } from "zod";
import {
  defineAsset,
  ROUNDING_MODES,
  type RoundingMode,
  UINT256_MAX,
  ValueError,
} from "../../src/values/index.js";

/** Shared fixtures and arbitraries for the value tests (not a test file itself). */

export const usdc = defineAsset({
  id: "eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
  decimals: 6,
  symbol: "USDC",
});
export const dai = defineAsset({
  id: "eip155:1/erc20:0x6b175474e89094c44da98b954eedeac495271d0f",
  decimals: 18,
  symbol: "DAI",
});
export const wbtc = defineAsset({ id: "wbtc", decimals: 8, symbol: "WBTC" });
export { mainnet, polygon };

export const unsigned = fc.bigInt({ min: 0n, max: UINT256_MAX });
export const signed = fc.bigInt({ min: -UINT256_MAX, max: UINT256_MAX });
/** Mostly small values, where rounding boundaries are dense, plus the full range. */
export const smallOrAny = fc.oneof(fc.bigInt({ min: -10_000n, max: 10_000n }), signed);

export const assetArb = fc.record({
  id: fc.stringMatching(/^[A-Za-z0-9._%:/-]{1,40}$/),
  decimals: fc.integer({ min: 0, max: 36 }),
  symbol: fc.constantFrom("USDC", "DAI", "X"),
});

export const roundingArb = fc.constantFrom(...ROUNDING_MODES);
export const inexactRoundingArb = fc.constantFrom(
  ...ROUNDING_MODES.filter((mode): mode is Exclude<RoundingMode, "exact"> => mode !== "exact"),
);

/** Runs `work` and returns the code of the ValueError it throws (fails the test otherwise). */
export function thrownCode(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(ValueError);
    return (error as ValueError).code;
  }
  throw new Error("expected a ValueError, nothing was thrown");
}

/** The `params.code` of the first issue of a failed safeParse / safeEncode. */
export function issueCode(result: z.ZodSafeParseResult<unknown>): unknown {
  expect(result.success).toBe(false);
  const issue = result.error?.issues[0];
  return issue?.code === "custom" ? issue.params?.code : issue?.code;
}
