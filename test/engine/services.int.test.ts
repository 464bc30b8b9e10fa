import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineActivity } from "../../src/engine/activity.js";
import { ENGINE_ERRORS } from "../../src/engine/error-codes.js";
import { defineService, provide } from "../../src/engine/services.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/**
 * Services through the context: a runner provides them once, a workflow's steps and an activity
 * read the ones their definition declares, and a runner that lacks a declared one refuses to
 * start, naming the definition and the service.
 */

interface Greeter {
  greet(name: string): string;
}

const greeterService = defineService<Greeter>("test.greeter");

const greetActivity = defineActivity({
  name: "test.services.greet-activity",
  queue: { name: "services-test" },
  input: z.object({ name: z.string() }),
  output: z.string(),
  services: [greeterService],
  async run(input, info) {
    return info.service(greeterService).greet(`${input.name} (activity)`);
  },
});

const greets = defineWorkflow({
  name: "test.services.greets",
  version: 1,
  input: z.object({ name: z.string() }),
  output: z.object({ step: z.string(), activity: z.string() }),
  services: [greeterService],
  async run(ctx, input) {
    const step = await ctx.step("greet", () => ctx.service(greeterService).greet(input.name));
    const activity = await ctx.step("greet.activity", greetActivity, { input });
    return { step, activity };
  },
});

const workflows = [greets];
const activities = [greetActivity];
let h: EngineHarness | undefined;

afterAll(async () => {
  await h?.stop();
});

describe("services", () => {
  it("a runner without a service a registered workflow declares refuses to start, naming both", async () => {
    const refused = await startEngineHarness({ file: import.meta.url, workflows, activities }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ code: ENGINE_ERRORS.SERVICE_MISSING });
    const message = (refused as Error).message;
    expect(message).toContain("workflow test.services.greets@1 needs test.greeter");
    expect(message).toContain("activity test.services.greet-activity needs test.greeter");
  });

  it("steps and activities read the services their definitions declare", async () => {
    h = await startEngineHarness({
      file: import.meta.url,
      workflows,
      activities,
      services: () => [provide(greeterService, { greet: (name) => `hello ${name}` })],
    });
    const { executionId } = await h.client.start({ workflow: greets.name, input: { name: "ada" } });
    const view = await h.waitForStatus(executionId, "completed");
    expect(view.output).toEqual({ step: "hello ada", activity: "hello ada (activity)" });
  });
});
