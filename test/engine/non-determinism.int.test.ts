import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/**
 * Non-determinism: when replay meets a position whose recorded name differs from the code, the
 * execution is held (suspended with `hold`), not failed, and resumes once the code replays again.
 */

let h: EngineHarness;

/** The "deployed code": which name the first step has. Tests switch it between turns. */
let chargeStepName = "charge.v1";

const changing = defineWorkflow({
  name: "test.nondet.changing",
  version: 1,
  input: z.object({ tag: z.string() }),
  output: z.object({ charged: z.string() }),
  async run(ctx, input) {
    const charged = await ctx.step(chargeStepName, async () => {
      await h.recordEffect(`${input.tag}:charge`);
      return "charged";
    });
    await ctx.waitForSignal("go", { schema: z.object({}) });
    await ctx.step("after", () => null);
    return { charged };
  },
});

beforeAll(async () => {
  h = await startEngineHarness({ file: import.meta.url, workflows: [changing] });
});

afterAll(async () => {
  await h?.stop();
});

async function holdAfterCodeChange(tag: string): Promise<string> {
  chargeStepName = "charge.v1";
  const { executionId } = await h.client.start({ workflow: "test.nondet.changing", input: { tag } });
  await h.waitForStatus(executionId, "waiting");
  chargeStepName = "charge.v2";
  await h.client.signal(executionId, "go", {});
  const held = await h.waitForView(executionId, (v) => v.hold !== null, "a hold");
  expect(held.status).toBe("suspended");
  expect(held.failure).toBeNull();
  expect(held.hold?.code).toBe("NON_DETERMINISM");
  expect(held.hold?.message).toContain('"charge.v1"');
  expect(held.hold?.message).toContain('"charge.v2"');
  expect(held.hold?.details).toMatchObject({
    position: 0,
    recorded: { kind: "step", name: "charge.v1" },
    code: { kind: "step", name: "charge.v2" },
  });
  expect(held.waitingFor?.[0]).toMatchObject({ kind: "fix", name: "NON_DETERMINISM" });
  return executionId;
}

describe("non-determinism", () => {
  it("holds the execution and resumes it when fixed code is woken", async () => {
    const executionId = await holdAfterCodeChange("wake");
    chargeStepName = "charge.v1";
    await h.runner().queue.wake(executionId);
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.output).toEqual({ charged: "charged" });
    expect(done.hold).toBeNull();
    expect(await h.effectCount("wake:charge")).toBe(1);
  });

  it("holds the execution and a fresh runner engine (a new deployment) resumes it", async () => {
    const executionId = await holdAfterCodeChange("restart");
    chargeStepName = "charge.v1";
    await h.restartRunner();
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.output).toEqual({ charged: "charged" });
    expect(await h.effectCount("restart:charge")).toBe(1);
  });
});
