import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineActivity } from "../../src/engine/activity.js";
import { ENGINE_ERRORS } from "../../src/engine/error-codes.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/**
 * An activity outcome PostgreSQL refuses to store (`\u0000` in text, 22P05) is a data error, not
 * a transient one: the position records RESULT_NOT_STORABLE once, naming the step, instead of the
 * job failing, the execution suspending and recovery running the activity again.
 */

let h: EngineHarness;

const poisoned = defineActivity({
  name: "test.activity-result.poisoned",
  queue: { name: "activity-result" },
  input: z.object({ tag: z.string() }),
  output: z.string(),
  async run(input) {
    await h.recordEffect(`${input.tag}:run`);
    return "bad\u0000value";
  },
});

const caller = defineWorkflow({
  name: "test.activity-result.caller",
  version: 1,
  input: z.object({ tag: z.string() }),
  output: z.string(),
  async run(ctx, input) {
    return ctx.step("quote", poisoned, { input });
  },
});

beforeAll(async () => {
  h = await startEngineHarness({ file: import.meta.url, workflows: [caller], activities: [poisoned] });
});

afterAll(async () => {
  await h?.stop();
});

describe("an activity result PostgreSQL cannot store", () => {
  it("fails the step once with RESULT_NOT_STORABLE and never runs the activity again", async () => {
    const { executionId } = await h.client.start({ workflow: caller.name, input: { tag: "p1" } });
    const failed = await h.waitForStatus(executionId, "failed");
    expect(failed.failure?.code).toBe(ENGINE_ERRORS.RESULT_NOT_STORABLE);
    expect(failed.failure?.message).toContain('"quote"');
    expect(await h.effectCount("p1:run")).toBe(1);
  });
});
