import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoSteps } from "../../flows/demo-steps.js";
import type { TestKit } from "../../src/testing/index.js";
import { startFileTestKit } from "../support/test-kit.js";

/** The operators' smoke-test workflow, run by the test kit's real runner on PostgreSQL and Redis. */
let kit: TestKit;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ kit, stop } = await startFileTestKit(import.meta.url, { workflows: [demoSteps] }));
});
afterAll(async () => {
  await stop?.();
});

describe("demo.steps", () => {
  it("journals every step in order, each holding its body for stepMs, and returns the step count", async () => {
    const began = Date.now();
    const run = await kit.start(demoSteps, { steps: 3, stepMs: 50 });
    expect(await run.output()).toEqual({ done: 3 });
    // The steps run one after the other, so their waits add up.
    expect(Date.now() - began).toBeGreaterThanOrEqual(150);
    const steps = (await run.journal()).filter((e) => e.kind === "step");
    expect(steps.map((e) => [e.name, e.result])).toEqual([
      ["s0", 1],
      ["s1", 2],
      ["s2", 3],
    ]);
  });

  it("runs without waiting when stepMs is left out", async () => {
    const run = await kit.start(demoSteps, { steps: 1 });
    expect(await run.output()).toEqual({ done: 1 });
  });

  it("refuses a step count outside 1–1000 and a negative wait before anything is stored", async () => {
    for (const input of [{ steps: 0 }, { steps: 1_001 }, { steps: 2, stepMs: -1 }, { steps: 1.5 }]) {
      await expect(kit.start(demoSteps, input)).rejects.toMatchObject({ code: "INPUT_INVALID" });
    }
  });
});
