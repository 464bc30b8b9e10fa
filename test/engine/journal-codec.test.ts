import { describe, expect, it } from "vitest";
import { z } from "zod";
import { decodeValue, encodeValue } from "../../src/engine/journal-codec.js";

describe("journal codec without a schema", () => {
  it("keeps JSON-safe values as they are, and undefined as null", () => {
    const value = { a: 1, b: "x", c: [true, null, { d: 2.5 }], e: Object.create(null) };
    expect(encodeValue(value, undefined)).toBe(value);
    expect(encodeValue(undefined, undefined)).toBeNull();
    expect(decodeValue(null, undefined)).toBeUndefined();
    expect(decodeValue({ a: 1 }, undefined)).toEqual({ a: 1 });
  });

  it.each([
    ["a bigint", 1n, /\$ is a bigint/],
    ["NaN", Number.NaN, /\$ is NaN/],
    ["Infinity", Number.POSITIVE_INFINITY, /\$ is Infinity/],
    ["a Date", new Date(0), /\$ is a Date/],
    ["a Map", new Map(), /\$ is a Map/],
    ["a class instance", new (class Amount {})(), /\$ is a Amount/],
    ["a function", () => 1, /\$ is a function/],
    ["a nested bigint", { a: [{ b: 1n }] }, /\$\.a\[0\]\.b is a bigint/],
    ["a nested undefined", { a: undefined }, /\$\.a is a undefined/],
  ])("refuses %s, naming the path", (_label, value, message) => {
    expect(() => encodeValue(value, undefined)).toThrow(message);
  });
});

describe("journal codec with a schema", () => {
  const Amount = z.codec(z.string().regex(/^\d+$/), z.bigint(), {
    decode: (text) => BigInt(text),
    encode: (value) => value.toString(),
  });

  it("stores the encoding and decodes it back", () => {
    const stored = encodeValue(10n ** 30n, Amount);
    expect(stored).toBe("1000000000000000000000000000000");
    expect(decodeValue(stored, Amount)).toBe(10n ** 30n);
  });

  it("refuses a stored value its schema rejects", () => {
    expect(() => decodeValue("12.5", Amount)).toThrow();
  });
});
