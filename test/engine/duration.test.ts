import { describe, expect, it } from "vitest";
import { type Duration, toMilliseconds } from "../../src/engine/duration.js";

describe("toMilliseconds", () => {
  it.each([
    [0, 0],
    [250, 250],
    ["250ms", 250],
    ["30s", 30_000],
    ["1.5s", 1_500],
    ["5m", 300_000],
    ["24h", 86_400_000],
    ["7d", 604_800_000],
  ] as [Duration, number][])("reads %j as %d ms", (input, ms) => {
    expect(toMilliseconds(input)).toBe(ms);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, "", "5", "5 s", "-5s", "5sec", "1.0005s", "s"])(
    "refuses %j with DURATION_INVALID",
    (input) => {
      expect(() => toMilliseconds(input as Duration)).toThrow(
        expect.objectContaining({ code: "DURATION_INVALID", details: { value: input } }),
      );
    },
  );
});
