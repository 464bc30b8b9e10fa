import { describe, expect, it } from "vitest";
import { z } from "zod";
import { dryReplay } from "../../src/engine/dry-replay.js";
import { BusinessError } from "../../src/engine/errors.js";
import type { JournalEntry } from "../../src/engine/execution-store.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { defineWorkflow } from "../../src/engine/workflow.js";

/** The dry replay behind `tenor compat`: recorded values only, no new work, no writes. */

const entry = (position: number, name: string, result: unknown): JournalEntry => ({
  position,
  kind: "step",
  name,
  state: "ok",
  result,
  error: null,
  attempts: 1,
  seq: position + 1,
  cause: position,
});

const target = (journal: JournalEntry[], version = 1) => ({
  id: "00000000-0000-4000-8000-000000000001",
  orgId: "acme",
  workflow: "dry.sample",
  workflowVersion: version,
  input: { n: 2 },
  journal,
});

function sample(run: (ran: string[]) => Parameters<typeof defineWorkflow>[0]["run"]) {
  const ran: string[] = [];
  const workflow = defineWorkflow({
    name: "dry.sample",
    version: 1,
    input: z.object({ n: z.number() }),
    output: z.object({}),
    run: run(ran) as never,
  });
  return { ran, registry: new WorkflowRegistry([workflow]) };
}

describe("dryReplay", () => {
  it("returns recorded values and stops at the first call beyond the journal without running it", async () => {
    const seen: unknown[] = [];
    const { ran, registry } = sample((ran) => async (ctx) => {
      seen.push(await ctx.step("a", () => ran.push("a")));
      await ctx.step("b", () => ran.push("b"));
      return {};
    });
    const outcome = await dryReplay(target([entry(0, "a", "recorded")]), registry);
    expect(outcome).toEqual({ kind: "compatible", reached: "journal-end" });
    expect(seen).toEqual(["recorded"]);
    expect(ran).toEqual([]);
  });

  it("reports the position, the recorded call and the new one on non-determinism", async () => {
    const { registry } = sample(() => async (ctx) => {
      await ctx.step("a", () => 1);
      await ctx.step("b2", () => 2);
      return {};
    });
    const outcome = await dryReplay(target([entry(0, "a", 1), entry(1, "b", 2)]), registry);
    expect(outcome).toMatchObject({
      kind: "non-determinism",
      position: 1,
      recorded: { kind: "step", name: "b" },
      found: { kind: "step", name: "b2" },
    });
  });

  it("reports a missing version, an input that no longer decodes, a throw, and a body that never settles", async () => {
    const { registry } = sample(() => async (ctx, input: { n: number }) => {
      const value = await ctx.step("a", () => 1);
      if (value === 1 && input.n === 2) throw new BusinessError("NEW_RULE", "refused by the new rule");
      return {};
    });
    expect(await dryReplay(target([], 3), registry)).toEqual({ kind: "version-missing", registered: [1] });
    expect(await dryReplay({ ...target([]), input: { n: "two" } }, registry)).toMatchObject({
      kind: "input-invalid",
    });
    expect(await dryReplay(target([entry(0, "a", 1)]), registry)).toEqual({
      kind: "throws",
      code: "NEW_RULE",
      message: "refused by the new rule",
    });
    const hanging = sample(() => () => new Promise(() => undefined));
    expect(await dryReplay(target([]), hanging.registry, { timeoutMs: 20 })).toMatchObject({
      kind: "stalled",
    });
  });
});
