import { describe, expect, it } from "vitest";
import { attributionSuffix, ERC8021_MARKER, withAttribution } from "../../src/chain/attribution.js";

describe("ERC-8021 schema-0 attribution", () => {
  it("matches the golden vector", () => {
    expect(attributionSuffix(["baseapp", "morpho"])).toBe(
      "0x626173656170702c6d6f7270686f0e0080218021802180218021802180218021",
    );
  });

  it("ends with the marker and carries the codes' length and schema 0", () => {
    const suffix = attributionSuffix(["tenor"]);
    expect(suffix.endsWith(ERC8021_MARKER.slice(2))).toBe(true);
    // "tenor" = 5 bytes → 0x05, then schema id 0x00.
    expect(suffix).toBe(`0x74656e6f720500${ERC8021_MARKER.slice(2)}`);
  });

  it("is appended once, even when construction runs again on attributed calldata", () => {
    const suffix = attributionSuffix(["tenor"]);
    const once = withAttribution("0xa9059cbb", suffix);
    expect(once).toBe(`0xa9059cbb${suffix.slice(2)}`);
    expect(withAttribution(once, suffix)).toBe(once);
    expect(withAttribution(undefined, suffix)).toBe(suffix);
  });

  it("refuses codes that would not decode", () => {
    for (const bad of [[], [""], ["a,b"], ["naïve"], ["x".repeat(256)]]) {
      expect(() => attributionSuffix(bad), JSON.stringify(bad)).toThrow(
        expect.objectContaining({ code: "ATTRIBUTION_INVALID" }),
      );
    }
  });
});
