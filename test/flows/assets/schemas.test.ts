import { describe, expect, it } from "vitest";
import { scaledPrice } from "../../../flows/assets/scaled-price.js";
import { CreateAssetInput } from "../../../flows/assets/schemas.js";

/** The asset.create input takes no platform facts, and the first price is scaled, never rounded. */

const input = { templateId: "demo-bond", name: "Demo Bond", symbol: "BND1", initialPrice: "100.25" };

describe("asset.create input", () => {
  it("refuses an organisation, a resolver or a staleness bound in the body", () => {
    expect(CreateAssetInput.parse(input)).toEqual(input);
    for (const extra of [
      { orgId: "other" },
      { resolver: "0x00000000000000000000000000000000000000aa" },
      { stalenessSeconds: 1 },
    ]) {
      const result = CreateAssetInput.safeParse({ ...input, ...extra });
      expect(result.success, JSON.stringify(extra)).toBe(false);
      expect(result.error?.issues[0]).toMatchObject({ code: "unrecognized_keys", keys: Object.keys(extra) });
    }
  });

  it("names the field and rule of a bad symbol or price", () => {
    const issues = CreateAssetInput.safeParse({ ...input, symbol: "bnd", initialPrice: "0" }).error?.issues;
    expect(issues).toEqual([
      expect.objectContaining({ path: ["symbol"], message: "must be 2–11 upper-case letters or digits" }),
      expect.objectContaining({ path: ["initialPrice"], message: "must be greater than 0" }),
    ]);
  });

  it("scales the price to the feed's decimals and refuses finer prices", () => {
    expect(scaledPrice("100.25", 8)).toBe(10_025_000_000n);
    expect(scaledPrice("7", 0)).toBe(7n);
    expect(() => scaledPrice("1.5", 0)).toThrow(
      expect.objectContaining({
        code: "ASSET_PRICE_INVALID",
        details: expect.objectContaining({ field: "initialPrice", value: "1.5" }),
      }),
    );
  });
});
