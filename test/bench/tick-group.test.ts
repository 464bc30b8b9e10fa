import { describe, expect, it } from "vitest";
import { TickGroup } from "../../bench/lib/tick-group.js";

/** A write that records each group it was given, takes one turn of the event loop and answers every item with its double. */
function recording() {
  const groups: number[][] = [];
  const write = async (items: readonly number[]) => {
    groups.push([...items]);
    await new Promise<void>((r) => setImmediate(r));
    return items.map((i) => i * 2);
  };
  return { groups, write };
}

describe("TickGroup", () => {
  it("sends the calls of one turn of the event loop as one write, each caller getting its own answer", async () => {
    const { groups, write } = recording();
    const group = new TickGroup(write, { flushOn: "immediate", maxBatch: 256, maxInFlight: 4 });
    const answers = await Promise.all([1, 2, 3].map((i) => group.submit(i)));
    expect(answers).toEqual([2, 4, 6]);
    expect(groups).toEqual([[1, 2, 3]]);
  });

  it("splits a group at maxBatch and gathers the next group while maxInFlight writes run", async () => {
    const { groups, write } = recording();
    const group = new TickGroup(write, { flushOn: "immediate", maxBatch: 2, maxInFlight: 1 });
    const first = [1, 2, 3].map((i) => group.submit(i));
    await new Promise<void>((r) => setImmediate(r));
    const late = group.submit(4);
    await Promise.all([...first, late]);
    expect(groups).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it("at once sends a call with no wait while a write slot is free, and gathers behind the writes in flight", async () => {
    const { groups, write } = recording();
    const group = new TickGroup(write, { flushOn: "at-once", maxBatch: 256, maxInFlight: 1 });
    const first = group.submit(1);
    expect(groups).toEqual([[1]]);
    await Promise.all([first, group.submit(2), group.submit(3)]);
    expect(groups).toEqual([[1], [2, 3]]);
  });

  it("at once when idle sends a lone call with no wait, and groups the calls made while it runs", async () => {
    const { groups, write } = recording();
    const group = new TickGroup(write, { flushOn: "at-once-when-idle", maxBatch: 256, maxInFlight: 4 });
    const first = group.submit(1);
    expect(groups).toEqual([[1]]);
    const later = [group.submit(2), group.submit(3)];
    expect(groups).toEqual([[1]]);
    await Promise.all([first, ...later]);
    expect(groups).toEqual([[1], [2, 3]]);
  });

  it("flushes on a timer when asked to", async () => {
    const { groups, write } = recording();
    const group = new TickGroup(write, { flushOn: { afterMs: 5 }, maxBatch: 256, maxInFlight: 4 });
    const a = group.submit(1);
    await new Promise<void>((r) => setImmediate(r));
    const b = group.submit(2);
    await Promise.all([a, b]);
    expect(groups).toEqual([[1, 2]]);
  });

  it("rejects every caller of a group whose write throws, and goes on with the next", async () => {
    let calls = 0;
    const group = new TickGroup(
      async (items: readonly number[]) => {
        calls++;
        if (calls === 1) throw new Error("connection lost");
        return [...items];
      },
      { flushOn: "microtask", maxBatch: 256, maxInFlight: 4 },
    );
    const failed = await Promise.allSettled([group.submit(1), group.submit(2)]);
    expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    await expect(group.submit(3)).resolves.toBe(3);
  });

  it("rejects a caller the write gave no answer for", async () => {
    const group = new TickGroup(async () => [], { flushOn: "immediate", maxBatch: 256, maxInFlight: 4 });
    await expect(group.submit(1)).rejects.toThrow(/no answer/);
  });
});
