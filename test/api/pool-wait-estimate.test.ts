import { describe, expect, it } from "vitest";
import { PoolWaitEstimate } from "../../src/api/pool-wait-estimate.js";

/** An estimate on a clock the test moves, and one hold of `ms` on a fresh client. */
function estimateOf(poolSize: number) {
  let now = 0;
  const estimate = new PoolWaitEstimate(poolSize, () => now);
  const advance = (ms: number) => {
    now += ms;
  };
  const hold = (ms: number) => {
    const client = {};
    estimate.acquired(client);
    advance(ms);
    estimate.released(client);
  };
  return { estimate, advance, hold };
}

describe("PoolWaitEstimate", () => {
  it("expects no wait when nothing waits, whatever the holds", () => {
    const { estimate, hold } = estimateOf(2);
    hold(5_000);
    expect(estimate.expectedWaitMs(0)).toBe(0);
  });

  it("is waiting × mean hold ÷ pool size (Little's law)", () => {
    const { estimate, hold } = estimateOf(20);
    hold(1);
    expect(estimate.meanHoldMs).toBe(1);
    // 40 requests queued for 20 connections held 1 ms each: 2 ms, not 40 requests' worth.
    expect(estimate.expectedWaitMs(40)).toBe(2);
    expect(estimate.expectedWaitMs(400)).toBe(20);
  });

  it("weighs the newest hold by a tenth, so one slow query does not swing the mean", () => {
    const { estimate, hold } = estimateOf(4);
    hold(10);
    hold(110);
    expect(estimate.meanHoldMs).toBeCloseTo(20, 10);
    hold(20);
    expect(estimate.meanHoldMs).toBeCloseTo(20, 10);
  });

  it("follows the database as it gets slower, and as it recovers", () => {
    const { estimate, hold } = estimateOf(20);
    for (let i = 0; i < 100; i++) hold(1);
    for (let i = 0; i < 100; i++) hold(500);
    expect(estimate.meanHoldMs).toBeGreaterThan(499);
    for (let i = 0; i < 100; i++) hold(1);
    expect(estimate.meanHoldMs).toBeLessThan(1.02);
  });

  it("counts the youngest hold in progress once every connection is in use: a stall releases nothing", () => {
    const { estimate, hold, advance } = estimateOf(2);
    hold(1);
    const [a, b] = [{}, {}];
    estimate.acquired(a);
    advance(300);
    // One connection free: a request would get it, the finished holds are all there is to go on.
    expect(estimate.expectedWaitMs(4)).toBe(2);
    estimate.acquired(b);
    advance(100);
    // Both held, the younger for 100 ms: 4 waiting × 100 ms ÷ 2.
    expect(estimate.expectedWaitMs(4)).toBe(200);
    advance(100);
    expect(estimate.expectedWaitMs(4)).toBe(400);
    estimate.released(a);
    expect(estimate.meanHoldMs).toBeCloseTo(0.9 + 50, 10);
    expect(estimate.expectedWaitMs(4)).toBeCloseTo(101.8, 10);
  });

  it("does not let one long hold stand for the pool while the others cycle", () => {
    const { estimate, hold, advance } = estimateOf(2);
    estimate.acquired({});
    for (let i = 0; i < 1_000; i++) hold(2);
    estimate.acquired({});
    advance(1);
    // Both in use, one for 2 s: the other is released every 2 ms, and the queue moves at that pace.
    expect(estimate.expectedWaitMs(10)).toBe(10);
  });

  it("ignores the release of a client acquired before it was attached", () => {
    const { estimate, hold } = estimateOf(2);
    hold(4);
    estimate.released({});
    expect(estimate.meanHoldMs).toBe(4);
  });

  it("refuses a pool size below one", () => {
    expect(() => new PoolWaitEstimate(0)).toThrow(RangeError);
  });
});
