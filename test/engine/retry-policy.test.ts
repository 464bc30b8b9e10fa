import { describe, expect, it } from "vitest";
import { backoffDelayMs, DEFAULT_RETRY_POLICY, resolveRetryPolicy } from "../../src/engine/retry-policy.js";

describe("resolveRetryPolicy", () => {
  it("applies the defaults under what the step gives", () => {
    expect(resolveRetryPolicy(undefined)).toEqual(DEFAULT_RETRY_POLICY);
    expect(resolveRetryPolicy({ attempts: 5 })).toEqual({ ...DEFAULT_RETRY_POLICY, attempts: 5 });
  });

  it.each([{ attempts: 0 }, { attempts: 1.5 }, { jitter: -0.1 }, { jitter: 1.1 }])("refuses %j", (policy) => {
    expect(() => resolveRetryPolicy(policy)).toThrow(RangeError);
  });
});

describe("backoffDelayMs", () => {
  const policy = { initialDelayMs: 100, factor: 2, maxDelayMs: 1_000, jitter: 0.2 };

  it("grows by the factor and stops at the cap without jitter", () => {
    const exact = { ...policy, jitter: 0 };
    expect([1, 2, 3, 4, 5, 10].map((attempt) => backoffDelayMs(exact, attempt))).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ]);
  });

  it("stays within ±jitter of the base and never above the cap or below zero", () => {
    for (const random of [0, 0.25, 0.5, 0.999_999]) {
      for (let attempt = 1; attempt <= 8; attempt++) {
        const base = Math.min(1_000, 100 * 2 ** (attempt - 1));
        const delay = backoffDelayMs(policy, attempt, () => random);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(base * 0.8));
        expect(delay).toBeLessThanOrEqual(Math.min(1_000, Math.ceil(base * 1.2)));
      }
    }
    expect(backoffDelayMs(policy, 1, () => 0)).toBe(80);
    expect(backoffDelayMs(policy, 1, () => 0.999_999)).toBe(120);
    expect(backoffDelayMs({ ...policy, jitter: 1 }, 1, () => 0)).toBe(0);
  });
});
