import { z } from "zod";
import { defineWorkflow } from "../src/engine/workflow.js";

/**
 * A smoke test for a deployment: `steps` journaled steps one after the other, each holding its
 * step for `stepMs` as a network call would. It needs no chain and no approval, so an operator can
 * start it against any api and runner and learn that the whole path (start, runner, journal,
 * completion, `Prefer: wait`) works, and roughly how fast. The benchmark drives the compiled
 * build with it (docs/performance.md, W16 and W14IO).
 */
export const DemoStepsInput = z.object({
  /** Steps to run, 1–1000. */
  steps: z.number().int().min(1).max(1_000),
  /** How long each step's body waits, in ms (0–60000, default 0). */
  stepMs: z.number().int().min(0).max(60_000).default(0),
});

/** `done` is the last step's result, which is `steps` when every step ran in order. */
export const DemoStepsOutput = z.object({ done: z.number().int() });

export const demoSteps = defineWorkflow({
  name: "demo.steps",
  version: 1,
  input: DemoStepsInput,
  output: DemoStepsOutput,
  async run(ctx, input) {
    let done = 0;
    for (let i = 0; i < input.steps; i++) {
      done = await ctx.step(`s${i}`, async () => {
        if (input.stepMs > 0) await new Promise((resolve) => setTimeout(resolve, input.stepMs));
        return i + 1;
      });
    }
    return { done };
  },
});
