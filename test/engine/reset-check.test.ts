import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { JournalEntry } from "../../src/engine/execution-store.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { replayableEnd } from "../../src/engine/reset-check.js";
import { defineWorkflow } from "../../src/engine/workflow.js";

/** Where a bulk reset-to-version starts: the first position the newest version does not replay. */

const entry = (position: number, name: string): JournalEntry => ({
  position,
  kind: "step",
  name,
  state: "ok",
  result: name,
  error: null,
  attempts: 1,
  seq: position + 1,
  cause: position,
});

const run = {
  id: "00000000-0000-4000-8000-000000000001",
  orgId: "acme",
  workflow: "reset.sample",
  input: { n: 1 },
};

const registry = new WorkflowRegistry([
  defineWorkflow({
    name: "reset.sample",
    version: 2,
    input: z.object({ n: z.number() }),
    output: z.object({}),
    async run(ctx) {
      await ctx.step("a", () => "a");
      await ctx.step("b2", () => "b2");
      await ctx.step("c", () => "c");
      return {};
    },
  }),
]);

describe("replayableEnd", () => {
  it("is the journal's length when the version replays all of it: nothing is set aside", async () => {
    expect(await replayableEnd(registry, run, 2, [entry(0, "a"), entry(1, "b2")])).toBe(2);
    expect(await replayableEnd(registry, run, 2, [])).toBe(0);
  });

  it("is the first position the version calls something else at", async () => {
    expect(await replayableEnd(registry, run, 2, [entry(0, "a"), entry(1, "b"), entry(2, "c")])).toBe(1);
  });

  it("refuses with RESET_PREFIX_NOT_REPLAYABLE when no position can be found: the input no longer decodes, the version is missing", async () => {
    const undecodable = await replayableEnd(registry, { ...run, input: { n: "one" } }, 2, [entry(0, "a")]);
    expect(undecodable).toMatchObject({
      code: "RESET_PREFIX_NOT_REPLAYABLE",
      message: expect.stringContaining("the run's input no longer decodes"),
      details: { problem: "input-invalid", toVersion: 2 },
    });
    expect(await replayableEnd(registry, run, 3, [])).toMatchObject({
      code: "RESET_PREFIX_NOT_REPLAYABLE",
      message: expect.stringContaining("cannot take execution"),
      details: { problem: "version-missing" },
    });
  });
});
