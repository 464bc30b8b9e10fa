import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { childExecutionId } from "../../src/engine/context.js";
import { BusinessError, ChildWorkflowError } from "../../src/engine/errors.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/** Child workflows: results and failures reach the parent; parallel children replay identically. */

let h: EngineHarness;

const ChildInput = z.object({ tag: z.string(), n: z.number(), refuse: z.boolean().default(false) });

const doubler = defineWorkflow({
  name: "test.children.doubler",
  version: 1,
  input: ChildInput,
  output: z.object({ doubled: z.number() }),
  async run(ctx, input) {
    const doubled = await ctx.step("double", async () => {
      await h.recordEffect(`${input.tag}:child:${input.n}`);
      return input.n * 2;
    });
    if (input.refuse) throw new BusinessError("CHILD_REFUSED", `child ${input.n} refuses`, { n: input.n });
    return { doubled };
  },
});

const parent = defineWorkflow({
  name: "test.children.parent",
  version: 1,
  input: z.object({ tag: z.string(), n: z.number() }),
  output: z.object({ doubled: z.number() }),
  async run(ctx, input) {
    return ctx.child(doubler, { tag: input.tag, n: input.n, refuse: false });
  },
});

const catcher = defineWorkflow({
  name: "test.children.catcher",
  version: 1,
  input: z.object({ tag: z.string() }),
  output: z.object({
    isChildError: z.boolean(),
    code: z.string(),
    childCode: z.string(),
    childId: z.string(),
  }),
  async run(ctx, input) {
    try {
      await ctx.child(doubler, { tag: input.tag, n: 5, refuse: true });
      throw new Error("the child should have failed");
    } catch (error) {
      const e = error as ChildWorkflowError;
      return {
        isChildError: error instanceof ChildWorkflowError,
        code: e.code,
        childCode: e.childFailure.code,
        childId: e.childExecutionId,
      };
    }
  },
});

const uncaught = defineWorkflow({
  name: "test.children.uncaught",
  version: 1,
  input: z.object({ tag: z.string() }),
  output: z.object({}),
  async run(ctx, input) {
    await ctx.child(doubler, { tag: input.tag, n: 6, refuse: true });
    return {};
  },
});

const fanOut = defineWorkflow({
  name: "test.children.fan-out",
  version: 1,
  input: z.object({ tag: z.string() }),
  output: z.object({ results: z.array(z.number()) }),
  async run(ctx, input) {
    const [a, b] = await Promise.all([
      ctx.child(doubler, { tag: input.tag, n: 10, refuse: false }),
      ctx.child(doubler, { tag: input.tag, n: 20, refuse: false }),
    ]);
    await ctx.waitForSignal("go", { schema: z.object({}) });
    return { results: [a.doubled, b.doubled] };
  },
});

beforeAll(async () => {
  h = await startEngineHarness({
    file: import.meta.url,
    workflows: [doubler, parent, catcher, uncaught, fanOut],
  });
});

afterAll(async () => {
  await h?.stop();
});

describe("child workflows", () => {
  it("return the child's result to the parent", async () => {
    const { executionId } = await h.client.start({
      workflow: "test.children.parent",
      input: { tag: "one", n: 21 },
    });
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.output).toEqual({ doubled: 42 });
    const childId = childExecutionId(executionId, 0);
    const child = await h.client.view(childId);
    expect(child).toMatchObject({ status: "completed", parentId: executionId, output: { doubled: 42 } });
    const journal = await h.client.journal(executionId);
    expect(journal).toHaveLength(1);
    expect(journal[0]).toMatchObject({ kind: "child", name: "test.children.doubler", state: "ok" });
    expect(await h.effectCount("one:child:21")).toBe(1);
  });

  it("raise a child's failure in the parent as ChildWorkflowError carrying the child's code", async () => {
    const { executionId } = await h.client.start({
      workflow: "test.children.catcher",
      input: { tag: "fail" },
    });
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.output).toEqual({
      isChildError: true,
      code: "CHILD_FAILED",
      childCode: "CHILD_REFUSED",
      childId: childExecutionId(executionId, 0),
    });
    const child = await h.client.view(childExecutionId(executionId, 0));
    expect(child.failure).toMatchObject({ code: "CHILD_REFUSED", details: { n: 5 } });
  });

  it("fail the parent with CHILD_FAILED when it does not catch the child's failure", async () => {
    const { executionId } = await h.client.start({
      workflow: "test.children.uncaught",
      input: { tag: "unc" },
    });
    const done = await h.waitForStatus(executionId, "failed");
    expect(done.failure).toMatchObject({
      code: "CHILD_FAILED",
      retryable: false,
      details: {
        childExecutionId: childExecutionId(executionId, 0),
        childFailure: { code: "CHILD_REFUSED" },
      },
    });
  });

  it("run two children under Promise.all and replay them identically", async () => {
    const { executionId } = await h.client.start({
      workflow: "test.children.fan-out",
      input: { tag: "fan" },
    });
    await h.waitForView(
      executionId,
      (v) => v.status === "waiting" && v.waitingFor?.[0]?.kind === "signal",
      "the wait for go",
    );
    await h.client.signal(executionId, "go", {});
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.output).toEqual({ results: [20, 40] });
    expect(await h.effectCount("fan:child:10")).toBe(1);
    expect(await h.effectCount("fan:child:20")).toBe(1);
    const journal = await h.client.journal(executionId);
    expect(journal.map((e) => [e.position, e.kind, e.state])).toEqual([
      [0, "child", "ok"],
      [1, "child", "ok"],
      [2, "signal", "ok"],
    ]);
    const { rows } = await h.db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM executions WHERE parent_id = $1",
      [executionId],
    );
    expect(rows[0]?.n).toBe(2);
  });
});
