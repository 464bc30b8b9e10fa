import { describe, expect, it } from "vitest";
import { startRepeatingTask } from "../../src/transport/repeating-task.js";

const until = async (probe: () => boolean) => {
  while (!probe()) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe("startRepeatingTask", () => {
  it("never overlaps passes, reports failures and keeps going, and stop waits for the pass in progress", async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    let passes = 0;
    let finished = 0;
    const errors: string[] = [];
    const task = startRepeatingTask(
      5,
      async () => {
        passes++;
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 25));
        inFlight--;
        finished++;
        if (passes === 1) throw new Error("first pass fails");
      },
      (error) => errors.push(error.message),
    );
    await until(() => passes >= 3);
    await task.stop();
    expect(maxInFlight).toBe(1);
    expect(errors).toEqual(["first pass fails"]);
    expect(finished).toBe(passes);
    const after = passes;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(passes).toBe(after);
  });
});
