import { describe, expect, it } from "vitest";
import { LoadShedder } from "../../src/api/load-shedder.js";

/** A shedder on a scripted clock and utilization: each `window(u)` is 250 ms at utilization u. */
function scripted(maxUtilization: number) {
  let now = 0;
  let utilization = 0;
  const shedder = new LoadShedder(
    maxUtilization,
    () => utilization,
    () => now,
  );
  return {
    shedder,
    /** Moves to the next adjustment window at `u`, then sends `requests`; returns how many were refused. */
    window(u: number, requests = 100): number {
      now += 250;
      utilization = u;
      let refused = 0;
      for (let i = 0; i < requests; i++) if (shedder.shed()) refused++;
      return refused;
    },
  };
}

describe("load shedder", () => {
  it("refuses nothing while the event loop has room", () => {
    const s = scripted(0.95);
    expect([s.window(0.5), s.window(0.95), s.window(0.9)]).toEqual([0, 0, 0]);
  });

  it("sheds a growing, evenly spread share while saturated, up to 95%", () => {
    const s = scripted(0.95);
    const refused = [1, 2, 3, 12].map(() => s.window(0.99));
    expect(refused).toEqual([10, 20, 30, 40]);
    for (let i = 0; i < 10; i++) s.window(0.99);
    expect(s.shedder.sheddingShare).toBeCloseTo(0.95);
    expect(s.window(0.99)).toBe(95);
  });

  it("lets requests back in gradually once the loop has room again", () => {
    const s = scripted(0.95);
    s.window(0.99);
    s.window(0.99);
    expect(s.shedder.sheddingShare).toBeCloseTo(0.2);
    expect(s.window(0.5)).toBe(15);
    expect(s.window(0.5)).toBe(10);
    s.window(0.5);
    s.window(0.5);
    expect(s.window(0.5)).toBe(0);
  });
});
