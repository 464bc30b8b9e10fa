import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { executionJobId, QUEUE_NAMES } from "../../src/transport/queue-names.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/**
 * What an execution's job costs Redis (docs/performance.md, W7): a parked execution's job hash
 * keeps every value within Redis's compact encoding (64 bytes by default), because how long
 * finished jobs are kept is the worker's setting rather than each job's; a completed execution's
 * job is removed.
 */

let h: EngineHarness;

const parked = defineWorkflow({
  name: "test.footprint.parked",
  version: 1,
  input: z.object({}),
  output: z.object({ done: z.boolean() }),
  async run(ctx) {
    await ctx.waitForSignal("go", { schema: z.object({}) });
    return { done: true };
  },
});

beforeAll(async () => {
  h = await startEngineHarness({ file: import.meta.url, workflows: [parked] });
});

afterAll(async () => {
  await h?.stop();
});

describe("an execution's job in Redis", () => {
  it("is a compact hash while parked and is removed once the execution completed", async () => {
    const { executionId } = await h.client.start({ workflow: parked.name, input: {} });
    await h.waitForStatus(executionId, "waiting");
    const key = `${h.config.redisPrefix}:${QUEUE_NAMES.executions}:${executionJobId(executionId)}`;
    expect(await h.producerRedis.call("OBJECT", "ENCODING", key)).toBe("listpack");
    expect(Number(await h.producerRedis.call("MEMORY", "USAGE", key))).toBeLessThan(512);
    await h.client.signal(executionId, "go", {});
    await h.waitForStatus(executionId, "completed");
    for (let polls = 0; (await h.producerRedis.exists(key)) === 1; polls++) {
      if (polls > 100) throw new Error(`the completed execution's job ${key} is still in Redis`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
});
