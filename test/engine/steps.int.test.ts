import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { BusinessError } from "../../src/engine/errors.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/**
 * Steps: run once, journaled before the body continues, replayed from the journal. Every
 * workflow here waits for a signal "go" in the middle, so what follows it runs in a later turn
 * that replays everything before it.
 */

let h: EngineHarness;

const Tag = z.object({ tag: z.string() });
const Go = z.object({ add: z.number().default(0) });

const replayed = defineWorkflow({
  name: "test.steps.replay",
  version: 1,
  input: Tag,
  output: z.object({ total: z.number() }),
  async run(ctx, input) {
    const first = await ctx.step("first", async () => {
      await h.recordEffect(`${input.tag}:first`);
      return { n: 41 };
    });
    const go = await ctx.waitForSignal("go", { schema: Go });
    const second = await ctx.step("second", async () => {
      await h.recordEffect(`${input.tag}:second`);
      return first.n + (go.timedOut ? 0 : go.payload.add);
    });
    return { total: second };
  },
});

const BigAmount = z.codec(z.string().regex(/^-?\d+$/), z.bigint(), {
  decode: (text) => BigInt(text),
  encode: (value) => value.toString(),
});

const codec = defineWorkflow({
  name: "test.steps.codec",
  version: 1,
  input: Tag,
  output: z.object({ kind: z.string(), next: z.string() }),
  async run(ctx) {
    const amount = await ctx.step("amount.read", () => 123_456_789_012_345_678_901_234_567_890n, {
      schema: BigAmount,
    });
    await ctx.waitForSignal("go", { schema: Go });
    return { kind: typeof amount, next: (amount + 1n).toString() };
  },
});

/** A refusal that is not a TenorError: named in `nonRetryable`, re-raised as its own class. */
class LimitExceeded extends Error {
  readonly code = "LIMIT_EXCEEDED";
  readonly details: Record<string, unknown>;
  constructor(limit: number) {
    super(`limit ${limit} exceeded`);
    this.name = "LimitExceeded";
    this.details = { limit };
  }
}

const refusals = defineWorkflow({
  name: "test.steps.refusals",
  version: 1,
  input: Tag,
  output: z.object({
    limit: z.object({ sameClass: z.boolean(), code: z.string(), message: z.string(), details: z.unknown() }),
    business: z.object({
      sameClass: z.boolean(),
      code: z.string(),
      retryable: z.boolean(),
      details: z.unknown(),
    }),
    branch: z.string(),
  }),
  async run(ctx, input) {
    let limit: unknown;
    try {
      await ctx.step(
        "limit.check",
        async () => {
          await h.recordEffect(`${input.tag}:limit`);
          throw new LimitExceeded(100);
        },
        { nonRetryable: [LimitExceeded] },
      );
    } catch (error) {
      limit = error;
    }
    let business: unknown;
    try {
      await ctx.step("kyc.check", async () => {
        await h.recordEffect(`${input.tag}:kyc`);
        throw new BusinessError("KYC_REFUSED", "kyc level too low", { level: 2 });
      });
    } catch (error) {
      business = error;
    }
    const branch = limit instanceof LimitExceeded ? "limit-path" : "other-path";
    await ctx.step(branch, () => h.recordEffect(`${input.tag}:${branch}`));
    await ctx.waitForSignal("go", { schema: Go });
    const l = limit as LimitExceeded;
    const b = business as BusinessError;
    return {
      limit: {
        sameClass: limit instanceof LimitExceeded,
        code: l.code,
        message: l.message,
        details: l.details,
      },
      business: {
        sameClass: business instanceof BusinessError,
        code: b.code,
        retryable: b.retryable,
        details: b.details,
      },
      branch,
    };
  },
});

const bodyRefuses = defineWorkflow({
  name: "test.steps.body-refuses",
  version: 1,
  input: Tag,
  output: z.object({}),
  async run(ctx) {
    await ctx.step("look", () => "seen");
    throw new BusinessError("ORDER_REJECTED", "order 7 rejected by policy", { order: 7, rule: "max" });
  },
});

const transient = defineWorkflow({
  name: "test.steps.transient",
  version: 1,
  input: Tag,
  output: z.object({ value: z.string(), attempt: z.number() }),
  async run(ctx, input) {
    return ctx.step(
      "flaky.read",
      async ({ attempt }) => {
        await h.recordEffect(`${input.tag}:flaky`);
        if (attempt < 3) throw new Error(`connection reset (attempt ${attempt})`);
        return { value: "read", attempt };
      },
      { retry: { attempts: 4, initialDelayMs: 10, maxDelayMs: 20 } },
    );
  },
});

const deterministic = defineWorkflow({
  name: "test.steps.deterministic",
  version: 1,
  input: Tag,
  output: z.object({ first: z.array(z.string()), last: z.array(z.string()) }),
  async run(ctx) {
    const now = await ctx.now();
    const id = await ctx.uuid();
    const random = await ctx.random();
    const seen = [now.toISOString(), id, String(random)];
    const first = await ctx.step("seen", () => seen);
    await ctx.waitForSignal("go", { schema: Go });
    return { first, last: seen };
  },
});

const progress = defineWorkflow({
  name: "test.steps.progress",
  version: 1,
  input: Tag,
  output: z.object({}),
  async run(ctx) {
    ctx.progress({ phase: "start", done: 0 });
    await ctx.step("work", () => 1);
    // A burst of snapshots, not awaited: the projection must end with the last one.
    for (let done = 1; done <= 20; done++) ctx.progress({ phase: "approval", done });
    await ctx.waitForSignal("go", { schema: Go });
    ctx.progress({ phase: "done", done: 2 });
    return {};
  },
});

const parallelSteps = defineWorkflow({
  name: "test.steps.parallel",
  version: 1,
  input: Tag,
  output: z.object({ values: z.array(z.string()) }),
  async run(ctx, input) {
    const slow = (name: string, ms: number) =>
      ctx.step(name, async () => {
        await new Promise((resolve) => setTimeout(resolve, ms));
        await h.recordEffect(`${input.tag}:${name}`);
        return `${name}-done`;
      });
    const values = await Promise.all([slow("p.a", 60), slow("p.b", 30), slow("p.c", 1)]);
    await ctx.waitForSignal("go", { schema: Go });
    return { values };
  },
});

const notSerializable = defineWorkflow({
  name: "test.steps.not-serializable",
  version: 1,
  input: Tag,
  output: z.object({}),
  async run(ctx) {
    await ctx.step("amount.read", () => 5n);
    return {};
  },
});

const codeError = defineWorkflow({
  name: "test.steps.code-error",
  version: 1,
  input: Tag,
  output: z.object({}),
  async run(ctx) {
    await ctx.step("look", () => null);
    throw new TypeError("cannot read properties of undefined");
  },
});

/** A step still running when its sibling parks is journaled before the turn ends, and not re-run. */
const siblingParks = defineWorkflow({
  name: "test.steps.sibling-parks",
  version: 1,
  input: Tag,
  output: z.object({ slow: z.string() }),
  async run(ctx, input) {
    const [slow] = await Promise.all([
      ctx.step("slow", async () => {
        await new Promise((resolve) => setTimeout(resolve, 150));
        await h.recordEffect(`${input.tag}:slow`);
        return "slow-done";
      }),
      ctx.waitForSignal("go", { schema: Go }),
    ]);
    return { slow };
  },
});

const LONG_STEPS = 2_000;

const longJournal = defineWorkflow({
  name: "test.steps.long-journal",
  version: 1,
  input: Tag,
  output: z.object({ sum: z.number() }),
  async run(ctx, input) {
    let sum = 0;
    for (let i = 0; i < LONG_STEPS; i++) {
      sum += await ctx.step(`s${i}`, async () => {
        if (i === 0) await h.recordEffect(`${input.tag}:s0`);
        return i;
      });
    }
    await ctx.waitForSignal("go", { schema: Go });
    return { sum };
  },
});

beforeAll(async () => {
  h = await startEngineHarness({
    file: import.meta.url,
    workflows: [
      notSerializable,
      codeError,
      siblingParks,
      replayed,
      codec,
      refusals,
      bodyRefuses,
      transient,
      deterministic,
      progress,
      parallelSteps,
      longJournal,
    ],
  });
});

afterAll(async () => {
  await h?.stop();
});

/** Starts `workflow`, waits until it waits for "go", sends it and returns the completed view. */
async function runThroughGo(workflow: string, tag: string, add = 0) {
  const { executionId } = await h.client.start({ workflow, input: { tag } });
  await h.waitForView(
    executionId,
    (v) => v.status === "waiting" && v.waitingFor?.some((w) => w.name === "go") === true,
    "a wait for go",
  );
  await h.client.signal(executionId, "go", { add });
  const view = await h.waitForView(
    executionId,
    (v) => v.status === "completed" || v.status === "failed",
    "a terminal status",
  );
  return { executionId, view };
}

async function turnsOf(executionId: string): Promise<number> {
  const { rows } = await h.db.pool.query<{ turn: number }>("SELECT turn FROM executions WHERE id = $1", [
    executionId,
  ]);
  return rows[0]?.turn ?? 0;
}

describe("steps", () => {
  it("run once, are journaled, and replay from the journal without running again", async () => {
    const { executionId, view } = await runThroughGo("test.steps.replay", "replay", 1);
    expect(view.status).toBe("completed");
    expect(view.output).toEqual({ total: 42 });
    expect(await turnsOf(executionId)).toBeGreaterThanOrEqual(2);
    expect(await h.effectCount("replay:first")).toBe(1);
    expect(await h.effectCount("replay:second")).toBe(1);
    const journal = await h.client.journal(executionId);
    expect(journal.map((e) => [e.position, e.kind, e.name, e.state])).toEqual([
      [0, "step", "first", "ok"],
      [1, "signal", "go", "ok"],
      [2, "step", "second", "ok"],
    ]);
    expect(journal[0]?.result).toEqual({ n: 41 });
    expect(journal[2]?.result).toBe(42);
  });

  it("journal a codec's encoding and decode it on replay", async () => {
    const { executionId, view } = await runThroughGo("test.steps.codec", "codec");
    expect(view.status).toBe("completed");
    expect(view.output).toEqual({ kind: "bigint", next: "123456789012345678901234567891" });
    const journal = await h.client.journal(executionId);
    expect(journal[0]?.result).toBe("123456789012345678901234567890");
  });

  it("journal a refusal and re-raise it identically on replay; the body branches on it", async () => {
    const { executionId, view } = await runThroughGo("test.steps.refusals", "refusals");
    expect(view.status).toBe("completed");
    expect(view.output).toEqual({
      limit: {
        sameClass: true,
        code: "LIMIT_EXCEEDED",
        message: "limit 100 exceeded",
        details: { limit: 100 },
      },
      business: { sameClass: true, code: "KYC_REFUSED", retryable: false, details: { level: 2 } },
      branch: "limit-path",
    });
    // Refusals are not retried, and replay does not run them again.
    expect(await h.effectCount("refusals:limit")).toBe(1);
    expect(await h.effectCount("refusals:kyc")).toBe(1);
    expect(await h.effectCount("refusals:limit-path")).toBe(1);
    const journal = await h.client.journal(executionId);
    expect(journal[0]).toMatchObject({
      name: "limit.check",
      state: "error",
      attempts: 1,
      error: { code: "LIMIT_EXCEEDED", name: "LimitExceeded", retryable: false },
    });
    expect(journal[1]).toMatchObject({ name: "kyc.check", state: "error", error: { code: "KYC_REFUSED" } });
  });

  it("end the run failed with the body's BusinessError: code, message, retryable=false, details", async () => {
    const { executionId } = await h.client.start({
      workflow: "test.steps.body-refuses",
      input: { tag: "b" },
    });
    const view = await h.waitForStatus(executionId, "failed");
    expect(view.failure).toMatchObject({
      code: "ORDER_REJECTED",
      message: "order 7 rejected by policy",
      retryable: false,
      details: { order: 7, rule: "max" },
    });
    expect(view.waitingFor).toBeNull();
  });

  it("retry a transient failure within the step's policy and record the attempts", async () => {
    const { executionId } = await h.client.start({ workflow: "test.steps.transient", input: { tag: "t" } });
    const view = await h.waitForStatus(executionId, "completed");
    expect(view.output).toEqual({ value: "read", attempt: 3 });
    expect(await h.effectCount("t:flaky")).toBe(3);
    const journal = await h.client.journal(executionId);
    expect(journal[0]).toMatchObject({ name: "flaky.read", state: "ok", attempts: 3 });
    expect(view.recoveryAttempts).toBe(0);
  });

  it("give ctx.now, ctx.uuid and ctx.random the same values on replay", async () => {
    const { view } = await runThroughGo("test.steps.deterministic", "det");
    expect(view.status).toBe("completed");
    const output = view.output as { first: string[]; last: string[] };
    expect(output.last).toEqual(output.first);
    expect(output.first[1]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("publish progress to the status projection", async () => {
    const { executionId } = await h.client.start({ workflow: "test.steps.progress", input: { tag: "p" } });
    const waiting = await h.waitForStatus(executionId, "waiting");
    expect(waiting.progress).toEqual({ phase: "approval", done: 20 });
    await h.client.signal(executionId, "go", {});
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.progress).toEqual({ phase: "done", done: 2 });
  });

  it("take positions in call order under Promise.all and replay them identically", async () => {
    const { executionId, view } = await runThroughGo("test.steps.parallel", "par");
    expect(view.status).toBe("completed");
    expect(view.output).toEqual({ values: ["p.a-done", "p.b-done", "p.c-done"] });
    const journal = await h.client.journal(executionId);
    expect(journal.slice(0, 3).map((e) => [e.position, e.name, e.result])).toEqual([
      [0, "p.a", "p.a-done"],
      [1, "p.b", "p.b-done"],
      [2, "p.c", "p.c-done"],
    ]);
    for (const name of ["p.a", "p.b", "p.c"]) expect(await h.effectCount(`par:${name}`)).toBe(1);
  });

  it("fail STEP_RESULT_NOT_SERIALIZABLE when a result without a schema is not JSON-safe", async () => {
    const { executionId } = await h.client.start({
      workflow: "test.steps.not-serializable",
      input: { tag: "ns" },
    });
    const view = await h.waitForStatus(executionId, "failed");
    expect(view.failure).toMatchObject({
      code: "STEP_RESULT_NOT_SERIALIZABLE",
      retryable: false,
      details: { step: "amount.read" },
    });
    expect(await h.client.journal(executionId)).toEqual([]);
  });

  it("fail WORKFLOW_CODE_ERROR when the body throws something that is not a business error", async () => {
    const { executionId } = await h.client.start({ workflow: "test.steps.code-error", input: { tag: "ce" } });
    const view = await h.waitForStatus(executionId, "failed");
    expect(view.failure).toMatchObject({
      code: "WORKFLOW_CODE_ERROR",
      message: "cannot read properties of undefined",
      retryable: false,
    });
  });

  it("journal a step that finishes after its sibling parked, and not run it again", async () => {
    const { executionId } = await h.client.start({
      workflow: "test.steps.sibling-parks",
      input: { tag: "sib" },
    });
    await h.waitForStatus(executionId, "waiting");
    const journal = await h.client.journal(executionId);
    expect(journal.map((e) => [e.position, e.name, e.state])).toEqual([
      [0, "slow", "ok"],
      [1, "go", "pending"],
    ]);
    await h.client.signal(executionId, "go", {});
    const view = await h.waitForStatus(executionId, "completed");
    expect(view.output).toEqual({ slow: "slow-done" });
    expect(await h.effectCount("sib:slow")).toBe(1);
  });

  it("replay an execution with 2,000 journaled steps", async () => {
    const { executionId } = await h.client.start({
      workflow: "test.steps.long-journal",
      input: { tag: "long" },
    });
    await h.waitForStatus(executionId, "waiting", 50_000);
    await h.client.signal(executionId, "go", {});
    const view = await h.waitForStatus(executionId, "completed", 50_000);
    expect(view.output).toEqual({ sum: (LONG_STEPS * (LONG_STEPS - 1)) / 2 });
    expect(await h.effectCount("long:s0")).toBe(1);
    expect(await h.client.journal(executionId)).toHaveLength(LONG_STEPS + 1);
  });
});
