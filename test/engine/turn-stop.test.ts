import { describe, expect, it } from "vitest";
import { NonDeterminismError } from "../../src/engine/errors.js";
import { TurnStop } from "../../src/engine/turn-stop.js";

const nonDeterminism = () =>
  new NonDeterminismError(0, { kind: "step", name: "a" }, { kind: "step", name: "b" });

describe("TurnStop", () => {
  it("starts open and closes on the first reason", () => {
    const stop = new TurnStop();
    expect(stop.closed).toBe(false);
    stop.park({ kind: "timer", name: "t" }, 10);
    expect(stop.closed).toBe(true);
  });

  it("accumulates parks: every wait, the earliest wake time, child and signal names", () => {
    const stop = new TurnStop();
    stop.park({ kind: "signal", name: "a" }, null, { signalName: "a" });
    stop.park({ kind: "timer", name: "t" }, 500);
    stop.park({ kind: "condition", name: "c" }, 200);
    stop.park({ kind: "child", name: "w" }, null, { child: true });
    expect(stop.reason).toEqual({
      kind: "park",
      waits: [
        { kind: "signal", name: "a" },
        { kind: "timer", name: "t" },
        { kind: "condition", name: "c" },
        { kind: "child", name: "w" },
      ],
      wakeAt: 200,
      child: true,
      signalNames: ["a"],
    });
  });

  it("lets the most severe reason win, whatever the order: fenced > hold > suspend > park", () => {
    const apply = {
      park: (s: TurnStop) => s.park({ kind: "timer", name: "t" }, 1),
      suspend: (s: TurnStop) => s.suspend({ kind: "recovery", name: "r" }),
      hold: (s: TurnStop) => s.hold(nonDeterminism()),
      fenced: (s: TurnStop) => s.fence(),
    };
    const order = ["park", "suspend", "hold", "fenced"] as const;
    for (const first of order) {
      for (const second of order) {
        const stop = new TurnStop();
        apply[first](stop);
        apply[second](stop);
        const expected = order.indexOf(first) >= order.indexOf(second) ? first : second;
        expect(stop.reason?.kind, `${first} then ${second}`).toBe(expected);
      }
    }
  });

  it("keeps the first suspension when a second one comes", () => {
    const stop = new TurnStop();
    stop.suspend({ kind: "recovery", name: "first" });
    stop.suspend({ kind: "recovery", name: "second" });
    expect(stop.reason).toEqual({ kind: "suspend", wait: { kind: "recovery", name: "first" } });
  });
});
