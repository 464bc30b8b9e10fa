import type pg from "pg";
import { z } from "zod";
import { defineActivity } from "../../src/engine/activity.js";
import type { WorkflowContext } from "../../src/engine/context.js";
import { BusinessError } from "../../src/engine/errors.js";
import { defineWorkflow } from "../../src/engine/workflow.js";

/**
 * The fault-point explorer's catalogue of workflow shapes (docs/engine.md, "The fault-point
 * explorer"). Each shape is one workflow, small enough that a clean run takes about a second, and
 * together they cover every kind of journal position a turn writes. Every step body records its run
 * in `fp_step_runs` (pid, clock_timestamp) before doing anything else, so the checker can count runs
 * of each step's work; step names are unique within a shape.
 *
 * The table is created by the explorer (test/fault-points/world.ts); the runner fixture
 * (test/fixtures/fault-points-runner.ts) binds the pool.
 */

export const STEP_RUNS_TABLE = `
  CREATE TABLE fp_step_runs (
    n serial PRIMARY KEY,
    execution_id uuid NOT NULL,
    step text NOT NULL,
    pid int NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`;

let bound: pg.Pool | null = null;

/** Gives the step bodies their pool (not the engine's: its statements are not fault points). */
export function bindShapes(pool: pg.Pool): void {
  bound = pool;
}

async function recordRun(executionId: string, step: string): Promise<void> {
  if (!bound) throw new Error("fault-point shapes used before bindShapes()");
  await bound.query("INSERT INTO fp_step_runs (execution_id, step, pid) VALUES ($1, $2, $3)", [
    executionId,
    step,
    process.pid,
  ]);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A step whose work is recorded, takes `workMs`, and returns `value` (default `<name>-ok`). */
function work<T = string>(ctx: WorkflowContext, name: string, workMs = 10, value?: T): Promise<T> {
  return ctx.step(name, async ({ executionId }) => {
    await recordRun(executionId, name);
    if (workMs > 0) await pause(workMs);
    return (value ?? `${name}-ok`) as T;
  });
}

/** How a branch of a settled fan-out ended, as the body saw it: `ok:<value>` or `error:<code>`. */
function settled(result: PromiseSettledResult<unknown>): string {
  if (result.status === "fulfilled") return `ok:${String(result.value)}`;
  const code = (result.reason as { code?: unknown }).code;
  return `error:${typeof code === "string" ? code : "UNKNOWN"}`;
}

const Tag = z.object({ tag: z.string() });
const Values = z.object({ values: z.array(z.string()) });
const Go = z.object({ value: z.string() });

export const fpSequential = defineWorkflow({
  name: "fp.sequential",
  version: 1,
  input: Tag,
  output: Values,
  async run(ctx) {
    const values = [await work(ctx, "s1"), await work(ctx, "s2"), await work(ctx, "s3")];
    return { values };
  },
});

export const fpAll = defineWorkflow({
  name: "fp.all",
  version: 1,
  input: Tag,
  output: Values,
  async run(ctx) {
    return { values: await Promise.all([work(ctx, "a", 10), work(ctx, "b", 60), work(ctx, "c", 120)]) };
  },
});

/** Defect 1's shape with a storable quote: a fast step beside a 400 ms effect (`pay`). */
export const fpAllSettled = defineWorkflow({
  name: "fp.all-settled",
  version: 1,
  input: Tag,
  output: Values,
  async run(ctx) {
    const results = await Promise.allSettled([work(ctx, "quote", 5), work(ctx, "pay", 400)]);
    return { values: results.map(settled) };
  },
});

export const fpRace = defineWorkflow({
  name: "fp.race",
  version: 1,
  input: Tag,
  output: Values,
  async run(ctx) {
    const winner = await Promise.race([work(ctx, "fast", 10), work(ctx, "slow", 300)]);
    return { values: [winner, await work(ctx, "after", 5)] };
  },
});

export const fpSignal = defineWorkflow({
  name: "fp.signal",
  version: 1,
  input: Tag,
  output: Values,
  async run(ctx) {
    const before = await work(ctx, "before");
    const go = await ctx.waitForSignal("go", { schema: Go });
    const value = go.timedOut ? "timed-out" : go.payload.value;
    return { values: [before, value, await work(ctx, "after")] };
  },
});

export const fpTimer = defineWorkflow({
  name: "fp.timer",
  version: 1,
  input: Tag,
  output: Values,
  async run(ctx) {
    const before = await work(ctx, "before");
    await ctx.sleep("nap", 300);
    return { values: [before, await work(ctx, "after")] };
  },
});

/** The activity of `fp.activity`: recorded like a step, on its own queue. */
export const fpQuoteActivity = defineActivity({
  name: "fp.quote",
  queue: { name: "fp-quotes", concurrency: 2 },
  input: z.object({ executionId: z.string(), amount: z.number().int() }),
  output: z.object({ quoted: z.number().int() }),
  async run(input) {
    // Recorded under its journal position's name, so the checker finds its checkpoint.
    await recordRun(input.executionId, "quote");
    await pause(30);
    return { quoted: input.amount * 2 };
  },
});

export const fpActivity = defineWorkflow({
  name: "fp.activity",
  version: 1,
  input: Tag,
  output: Values,
  async run(ctx) {
    const before = await work(ctx, "before");
    const { quoted } = await ctx.step("quote", fpQuoteActivity, {
      input: { executionId: ctx.executionId, amount: 21 },
    });
    return { values: [before, String(quoted), await work(ctx, "after")] };
  },
});

export const fpChildWorker = defineWorkflow({
  name: "fp.child-worker",
  version: 1,
  input: Tag,
  output: z.object({ value: z.string() }),
  async run(ctx) {
    return { value: await work(ctx, "child.work") };
  },
});

export const fpChild = defineWorkflow({
  name: "fp.child",
  version: 1,
  input: Tag,
  output: Values,
  async run(ctx, input) {
    const before = await work(ctx, "before");
    const child = await ctx.child(fpChildWorker, { tag: input.tag });
    return { values: [before, child.value, await work(ctx, "after")] };
  },
});

/** Parameters the approval shape asks approval for; the explorer votes for their hash. */
export const APPROVAL_PARAMS = { amount: "100", currency: "EUR" };

export const fpApproval = defineWorkflow({
  name: "fp.approval",
  version: 1,
  input: Tag,
  output: Values,
  async run(ctx) {
    const before = await work(ctx, "before");
    const decision = await ctx.waitForApproval("release", { params: APPROVAL_PARAMS });
    const verdict = decision.timedOut ? "timed-out" : decision.approved ? "approved" : "rejected";
    return { values: [before, verdict, await work(ctx, "after")] };
  },
});

export const fpKeyed = defineWorkflow({
  name: "fp.keyed",
  version: 1,
  input: z.object({ tag: z.string(), account: z.string() }),
  output: Values,
  key: (input) => `account:${input.account}`,
  async run(ctx) {
    return { values: [await work(ctx, "debit"), await work(ctx, "credit")] };
  },
});

/** Defect 1 itself: `quote`'s result cannot be stored; `pay` (400 ms) must still run once. */
export const fpUnstorableStep = defineWorkflow({
  name: "fp.unstorable-step",
  version: 1,
  input: Tag,
  output: Values,
  async run(ctx) {
    const results = await Promise.allSettled([
      work(ctx, "quote", 5, "bad\u0000quote"),
      work(ctx, "pay", 400),
    ]);
    return { values: results.map(settled) };
  },
});

/** Defect 2: a storable step result decoded into an output with trailing NULs. */
export const fpUnstorableOutput = defineWorkflow({
  name: "fp.unstorable-output",
  version: 1,
  input: Tag,
  output: z.object({ name: z.string() }),
  async run(ctx) {
    const hex = await work(ctx, "fetch-name", 5, Buffer.from("ACME\u0000\u0000", "utf8").toString("hex"));
    return { name: Buffer.from(hex, "hex").toString("utf8") };
  },
});

/** Defect 3: a business failure whose message carries a NUL. */
export const fpUnstorableFailure = defineWorkflow({
  name: "fp.unstorable-failure",
  version: 1,
  input: Tag,
  output: Values,
  async run(ctx) {
    await work(ctx, "check");
    throw new BusinessError("X", "bad\u0000message");
  },
});

/** A branch throws a business error while its sibling waits for a signal that never comes. */
export const fpThrowsWhileWaiting = defineWorkflow({
  name: "fp.throws-while-waiting",
  version: 1,
  input: Tag,
  output: Values,
  async run(ctx) {
    const failing = (async () => {
      await work(ctx, "check", 30);
      throw new BusinessError("LIMIT_EXCEEDED", "the amount is over the limit");
    })();
    const waiting = ctx.waitForSignal("never", { schema: Go });
    await Promise.all([failing, waiting]);
    return { values: [] };
  },
});

/** Every workflow the runner fixture registers and the explorer's client starts. */
export const SHAPE_WORKFLOWS = [
  fpSequential,
  fpAll,
  fpAllSettled,
  fpRace,
  fpSignal,
  fpTimer,
  fpActivity,
  fpChildWorker,
  fpChild,
  fpApproval,
  fpKeyed,
  fpUnstorableStep,
  fpUnstorableOutput,
  fpUnstorableFailure,
  fpThrowsWhileWaiting,
] as const;

export const SHAPE_ACTIVITIES = [fpQuoteActivity] as const;

/** What the explorer must do from outside for a shape to finish. */
export type ShapeDriver = "none" | "signal" | "approval";

/**
 * The result a shape must end with when nothing goes wrong: status with output, or a failure code.
 * `escaped`: the failure record must say which of its parts were escaped (defect 3's fix).
 */
export type ExpectedResult =
  | { status: "completed"; output: unknown }
  | { status: "failed"; code: string; escaped?: boolean };

export interface Shape {
  /** Stable name, the first part of a run's replayable name. */
  name: string;
  workflow: string;
  input(tag: string): unknown;
  driver: ShapeDriver;
  /** What a clean run must end with (the engine's documented behaviour after the round-3 fixes). */
  expected: ExpectedResult;
}

const tagged = (tag: string) => ({ tag });

export const SHAPES: readonly Shape[] = [
  {
    name: "sequential",
    workflow: "fp.sequential",
    input: tagged,
    driver: "none",
    expected: { status: "completed", output: { values: ["s1-ok", "s2-ok", "s3-ok"] } },
  },
  {
    name: "all",
    workflow: "fp.all",
    input: tagged,
    driver: "none",
    expected: { status: "completed", output: { values: ["a-ok", "b-ok", "c-ok"] } },
  },
  {
    name: "all-settled",
    workflow: "fp.all-settled",
    input: tagged,
    driver: "none",
    expected: { status: "completed", output: { values: ["ok:quote-ok", "ok:pay-ok"] } },
  },
  {
    name: "race",
    workflow: "fp.race",
    input: tagged,
    driver: "none",
    expected: { status: "completed", output: { values: ["fast-ok", "after-ok"] } },
  },
  {
    name: "signal",
    workflow: "fp.signal",
    input: tagged,
    driver: "signal",
    expected: { status: "completed", output: { values: ["before-ok", "go", "after-ok"] } },
  },
  {
    name: "timer",
    workflow: "fp.timer",
    input: tagged,
    driver: "none",
    expected: { status: "completed", output: { values: ["before-ok", "after-ok"] } },
  },
  {
    name: "activity",
    workflow: "fp.activity",
    input: tagged,
    driver: "none",
    expected: { status: "completed", output: { values: ["before-ok", "42", "after-ok"] } },
  },
  {
    name: "child",
    workflow: "fp.child",
    input: tagged,
    driver: "none",
    expected: { status: "completed", output: { values: ["before-ok", "child.work-ok", "after-ok"] } },
  },
  {
    name: "approval",
    workflow: "fp.approval",
    input: tagged,
    driver: "approval",
    expected: { status: "completed", output: { values: ["before-ok", "approved", "after-ok"] } },
  },
  {
    name: "keyed",
    workflow: "fp.keyed",
    // One key per run: a run left unfinished by a defect must not hold the next run's key.
    input: (tag) => ({ tag, account: `acct-${tag}` }),
    driver: "none",
    expected: { status: "completed", output: { values: ["debit-ok", "credit-ok"] } },
  },
  {
    name: "unstorable-step",
    workflow: "fp.unstorable-step",
    input: tagged,
    driver: "none",
    expected: { status: "completed", output: { values: ["error:RESULT_NOT_STORABLE", "ok:pay-ok"] } },
  },
  {
    name: "unstorable-output",
    workflow: "fp.unstorable-output",
    input: tagged,
    driver: "none",
    expected: { status: "failed", code: "OUTPUT_NOT_STORABLE" },
  },
  {
    name: "unstorable-failure",
    workflow: "fp.unstorable-failure",
    input: tagged,
    driver: "none",
    expected: { status: "failed", code: "X", escaped: true },
  },
  {
    name: "throws-while-waiting",
    workflow: "fp.throws-while-waiting",
    input: tagged,
    driver: "none",
    expected: { status: "failed", code: "LIMIT_EXCEEDED" },
  },
];
