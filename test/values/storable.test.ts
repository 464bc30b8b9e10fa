import { describe, expect, it } from "vitest";
import { escapeUnstorable, findUnstorable, isStorableText } from "../../src/values/storable.js";

/** The one rule of what PostgreSQL can store (src/values/storable.ts). */
describe("findUnstorable", () => {
  it("names the first path that breaks the rule, and which rule", () => {
    expect(findUnstorable({ a: [1, { b: "x\u0000" }] })).toMatchObject({
      path: "a.1.b",
      rule: "nul-character",
    });
    expect(findUnstorable(["ok", "\ud800x"])).toMatchObject({ path: "1", rule: "lone-surrogate" });
    expect(findUnstorable("\udc00")).toMatchObject({ path: "", rule: "lone-surrogate" });
    expect(findUnstorable({ "k\u0000": 1 })).toMatchObject({ path: "k\u0000", rule: "nul-character" });
    expect(findUnstorable({ n: Number.NaN })).toMatchObject({ path: "n", rule: "not-json" });
    expect(findUnstorable({ n: 1n })).toMatchObject({ path: "n", rule: "not-json" });
  });

  it("accepts what jsonb stores: surrogate pairs, control characters other than U+0000, nesting", () => {
    expect(
      findUnstorable({ emoji: "😀", tab: "\t\u0001", deep: [[[{ x: null, y: true, z: -0.5 }]]] }),
    ).toBeNull();
    expect(findUnstorable(new Date(0))).toBeNull();
    expect(isStorableText("plain")).toBe(true);
    expect(isStorableText("a\u0000")).toBe(false);
  });

  it("measures size only when a cheap bound passes the limit, and then exactly", () => {
    const value = { text: "é".repeat(600) }; // 1,200 bytes of UTF-8 in 600 units
    expect(findUnstorable(value, { maxBytes: 1_300 })).toBeNull();
    expect(findUnstorable(value, { maxBytes: 1_100 })).toMatchObject({ path: "", rule: "too-large" });
  });
});

describe("escapeUnstorable", () => {
  it("writes the offending characters out as visible escapes and lists the paths it changed", () => {
    const { value, escaped } = escapeUnstorable({ message: "a\u0000b", details: { x: "\udc00", ok: "😀" } });
    expect(value).toEqual({ message: "a\\u0000b", details: { x: "\\udc00", ok: "😀" } });
    expect(escaped).toEqual(["message", "details.x"]);
    expect(findUnstorable(value)).toBeNull();
  });
});
