import type pg from "pg";
import { z } from "zod";
import { demoSteps } from "../flows/demo-steps.js";
import { defineWorkflow } from "../src/engine/workflow.js";

/**
 * The workflows the benchmark runs on Tenor. Every one is registered wherever a Tenor runner
 * runs in the benchmark (in-process or bench/tenor-runner.ts), because a runner refuses to start
 * while a declared workflow is unregistered.
 */

/** W1, W2, W3: `steps` sequential no-op steps. */
export const noopChain = defineWorkflow({
  name: "bench.noop-chain",
  version: 1,
  input: z.object({ steps: z.number().int().min(1) }),
  output: z.object({ done: z.number() }),
  async run(ctx, input) {
    let done = 0;
    for (let i = 0; i < input.steps; i++) done = await ctx.step(`s${i}`, () => i + 1);
    return { done };
  },
});

/** W4: one child of a fan-out; one step. */
export const fanoutChild = defineWorkflow({
  name: "bench.fanout-child",
  version: 1,
  input: z.object({ i: z.number().int() }),
  output: z.object({ i: z.number() }),
  async run(ctx, input) {
    return { i: await ctx.step("work", () => input.i) };
  },
});

/** W4: starts `children` children at once (Promise.all) and waits for all of them. */
export const fanoutParent = defineWorkflow({
  name: "bench.fanout-parent",
  version: 1,
  input: z.object({ children: z.number().int().min(1) }),
  output: z.object({ sum: z.number() }),
  async run(ctx, input) {
    const outputs = await Promise.all(
      Array.from({ length: input.children }, (_, i) => ctx.child(fanoutChild, { i })),
    );
    return { sum: outputs.reduce((acc, o) => acc + o.i, 0) };
  },
});

/** W6, W7: `steps` no-op steps, then parked on a signal that never comes. */
export const parkAfterSteps = defineWorkflow({
  name: "bench.park",
  version: 1,
  input: z.object({ steps: z.number().int().min(0) }),
  output: z.object({ done: z.boolean() }),
  async run(ctx, input) {
    for (let i = 0; i < input.steps; i++) await ctx.step(`s${i}`, () => i);
    await ctx.waitForSignal("go", { schema: z.unknown() });
    return { done: true };
  },
});

/** W8: sleeps until `at` (epoch ms), then records how late the first step after the timer ran. */
export const timer = defineWorkflow({
  name: "bench.timer",
  version: 1,
  input: z.object({ at: z.number() }),
  output: z.object({ latenessMs: z.number() }),
  async run(ctx, input) {
    await ctx.sleepUntil("due", new Date(input.at));
    const latenessMs = await ctx.step("woke", () => Date.now() - input.at);
    return { latenessMs };
  },
});

let effectsPool: pg.Pool | null = null;

/** Gives the crash workflow the pool its side effects go to (the workload database). */
export function bindEffects(pool: pg.Pool): void {
  effectsPool = pool;
}

/**
 * DDL of the side-effect log W5 counts duplicates in, and of its stop flag: a row in
 * `bench_stop` ends every crash chain at its next step.
 */
export const EFFECTS_TABLE_SQL =
  "CREATE TABLE IF NOT EXISTS bench_effects (execution_id uuid NOT NULL, position int NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp()); " +
  "CREATE TABLE IF NOT EXISTS bench_stop (at timestamptz NOT NULL DEFAULT now())";

/**
 * W5: up to `steps` steps, each recording one side effect and then taking `stepMs`, so that many
 * executions are mid-step when the runner is killed. A chain runs until the bench raises the stop
 * flag (read inside the step, so the decision is journaled and replays the same), however long a
 * slow machine takes to get to the kill.
 */
export const crashChain = defineWorkflow({
  name: "bench.crash-chain",
  version: 1,
  input: z.object({ steps: z.number().int().min(1), stepMs: z.number().int().min(0) }),
  output: z.object({ done: z.number() }),
  async run(ctx, input) {
    for (let i = 0; i < input.steps; i++) {
      const { stop } = await ctx.step(`s${i}`, async ({ executionId, position }) => {
        if (!effectsPool) throw new Error("bindEffects() was not called in this process");
        const { rows } = await effectsPool.query<{ stop: boolean }>(
          `WITH effect AS (INSERT INTO bench_effects (execution_id, position) VALUES ($1, $2))
           SELECT EXISTS (SELECT 1 FROM bench_stop) AS stop`,
          [executionId, position],
        );
        await new Promise((resolve) => setTimeout(resolve, input.stepMs));
        return { stop: rows[0]?.stop === true };
      });
      if (stop) return { done: i + 1 };
    }
    return { done: input.steps };
  },
});

/**
 * The deployed system's client (bench/systems/tenor-deployed.ts) declares the release's
 * `demo.steps` in this process, so the runners started here register it too.
 */
export const BENCH_WORKFLOWS = [
  noopChain,
  fanoutChild,
  fanoutParent,
  parkAfterSteps,
  timer,
  crashChain,
  demoSteps,
];
