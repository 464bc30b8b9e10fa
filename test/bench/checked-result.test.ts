import { describe, expect, it } from "vitest";
import { expectResult } from "../../bench/lib/checked-result.js";

describe("expectResult", () => {
  it("accepts an equal value", () => {
    expect(() => expectResult("chain", { done: 10 }, { done: 10 })).not.toThrow();
    expect(() => expectResult("chain", 10, 10)).not.toThrow();
  });

  it("refuses a wrong or missing value, naming what, what was read and what was expected", () => {
    expect(() => expectResult("chain x", { done: 9 }, { done: 10 })).toThrow(
      'chain x ended with {"done":9}, expected {"done":10}',
    );
    expect(() => expectResult("chain", "10", 10)).toThrow('ended with "10", expected 10');
    expect(() => expectResult("chain", undefined, 10)).toThrow(/ended with undefined/);
  });
});
