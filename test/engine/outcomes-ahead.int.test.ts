import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ENGINE_ERRORS } from "../../src/engine/error-codes.js";
import { BusinessError } from "../../src/engine/errors.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/**
 * Outcomes ahead of their rows (docs/engine.md): a step's outcome reaches the body before its row
 * commits, but nothing the body does next takes effect until it has. The next step's work starts
 * only once the previous row is in PostgreSQL, and a body that returns after its last step
 * completes in the statement that writes that step's row.
 */

let h: EngineHarness;
/** Statement names sent through the engine's pool since the last reset. */
let sent: string[] = [];
/** For each `beforeStep` of `test.ahead.serial`: the step rows PostgreSQL held at that moment. */
const rowsAtStepStart: Array<{ step: string; rows: string[] }> = [];

const serial = defineWorkflow({
  name: "test.ahead.serial",
  version: 1,
  input: z.object({ tag: z.string() }),
  output: z.object({ values: z.array(z.string()) }),
  async run(ctx, input) {
    const values: string[] = [];
    for (const step of ["s0", "s1", "s2"]) {
      values.push(
        await ctx.step(step, async () => {
          await h.recordEffect(`${input.tag}:${step}`);
          return `${step}-done`;
        }),
      );
    }
    return { values };
  },
});

/** A step, then the body ends the turn another way: it fails, or it waits for a signal. */
const stepThen = defineWorkflow({
  name: "test.ahead.step-then",
  version: 1,
  input: z.object({ ending: z.enum(["fail", "wait"]) }),
  output: z.object({ got: z.string() }),
  async run(ctx, input) {
    const value = await ctx.step("s0", () => "s0-done");
    if (input.ending === "fail") throw new BusinessError("TEST_REFUSED", `refused after ${value}`);
    await ctx.waitForSignal("go", { schema: z.object({}) });
    return { got: value };
  },
});

/** A branch's step returns a value PostgreSQL refuses while another branch waits for a signal. */
const refusedBeside = defineWorkflow({
  name: "test.ahead.refused-beside-wait",
  version: 1,
  input: z.object({}),
  output: z.object({ got: z.string() }),
  async run(ctx) {
    const [got] = await Promise.all([
      ctx.step("quote", async () => "bad\u0000value"),
      ctx.waitForSignal("never", { schema: z.object({}) }),
    ]);
    return { got };
  },
});

beforeAll(async () => {
  h = await startEngineHarness({
    file: import.meta.url,
    workflows: [serial, stepThen, refusedBeside],
    hooks: {
      async beforeStep({ executionId, step }) {
        const { rows } = await h.db.pool.query(
          "SELECT name FROM journal_entries WHERE execution_id = $1 ORDER BY position",
          [executionId],
        );
        rowsAtStepStart.push({ step, rows: rows.map((r) => r.name as string) });
      },
    },
  });
  const original = h.pool.query.bind(h.pool) as (...args: unknown[]) => unknown;
  (h.pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const first = args[0] as string | { name?: string; text: string };
    if (typeof first !== "string" && first.name) sent.push(first.name);
    return original(...args);
  };
});

afterAll(async () => {
  await h?.stop();
});

describe("outcomes ahead of their rows", () => {
  it("a step's work starts only once the previous step's row committed", async () => {
    rowsAtStepStart.length = 0;
    const { executionId } = await h.client.start({ workflow: serial.name, input: { tag: "order" } });
    const view = await h.waitForStatus(executionId, "completed");
    expect(view.output).toEqual({ values: ["s0-done", "s1-done", "s2-done"] });
    expect(rowsAtStepStart).toEqual([
      { step: "s0", rows: [] },
      { step: "s1", rows: ["s0"] },
      { step: "s2", rows: ["s0", "s1"] },
    ]);
  });

  it("the last step's row is written by the completion's statement", async () => {
    sent = [];
    const { executionId } = await h.client.start({ workflow: serial.name, input: { tag: "fold" } });
    await h.waitForStatus(executionId, "completed");
    // s0 and s1 leave before the next step's work; s2 leaves with the completion.
    expect(sent.filter((name) => name === "tenor_append_entry")).toHaveLength(2);
    expect(sent.filter((name) => name === "tenor_complete_many")).toHaveLength(1);
    const { rows } = await h.db.pool.query(
      "SELECT name, state, turn, seq FROM journal_entries WHERE execution_id = $1 ORDER BY position",
      [executionId],
    );
    expect(rows).toEqual([
      { name: "s0", state: "ok", turn: 1, seq: 1 },
      { name: "s1", state: "ok", turn: 1, seq: 2 },
      { name: "s2", state: "ok", turn: 1, seq: 3 },
    ]);
    for (const step of ["s0", "s1", "s2"]) expect(await h.effectCount(`fold:${step}`)).toBe(1);
  });

  it("a turn that fails or parks after a step writes the step's row first", async () => {
    const failed = await h.client.start({ workflow: stepThen.name, input: { ending: "fail" } });
    const view = await h.waitForStatus(failed.executionId, "failed");
    expect(view.failure?.code).toBe("TEST_REFUSED");
    const parked = await h.client.start({ workflow: stepThen.name, input: { ending: "wait" } });
    await h.waitForStatus(parked.executionId, "waiting");
    for (const id of [failed.executionId, parked.executionId]) {
      const { rows } = await h.db.pool.query(
        "SELECT name, state, seq FROM journal_entries WHERE execution_id = $1 AND position = 0",
        [id],
      );
      expect(rows).toEqual([{ name: "s0", state: "ok", seq: 1 }]);
    }
    await h.client.signal(parked.executionId, "go", {});
    expect((await h.waitForStatus(parked.executionId, "completed")).output).toEqual({ got: "s0-done" });
  });

  it("a refused row beside a parked branch ends the turn, and the next turn replays the refusal", async () => {
    const { executionId } = await h.client.start({ workflow: refusedBeside.name, input: {} });
    const view = await h.waitForStatus(executionId, "failed", 20_000);
    expect(view.failure?.code).toBe(ENGINE_ERRORS.RESULT_NOT_STORABLE);
    expect(view.failure?.message).toContain('"quote"');
  });
});
