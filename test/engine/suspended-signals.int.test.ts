import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/**
 * Signals to a suspended execution must not spend its recovery budget: recovery is paced by its
 * backoff, and a burst of signals (webhooks, retries by a caller) is kept for when it resumes.
 */

let h: EngineHarness;

const MAX_RECOVERIES = 2;

let dependencyUp = false;

const waitsAfterOutage = defineWorkflow({
  name: "test.suspended.signals",
  version: 1,
  input: z.object({}),
  output: z.object({ notes: z.array(z.number()) }),
  async run(ctx) {
    await ctx.step(
      "provider.call",
      async () => {
        await h.recordEffect("provider.call");
        if (!dependencyUp) throw new Error("provider unreachable");
        return null;
      },
      { retry: { attempts: 1 } },
    );
    const notes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const note = await ctx.waitForSignal("note", { schema: z.object({ n: z.number() }) });
      if (!note.timedOut) notes.push(note.payload.n);
    }
    return { notes };
  },
});

beforeAll(async () => {
  h = await startEngineHarness({
    file: import.meta.url,
    workflows: [waitsAfterOutage],
    // The first recovery is due in about 2 s (±20 %), well after the signals below.
    durable: { recovery: { maxAttempts: MAX_RECOVERIES, baseDelayMs: 2_000, maxDelayMs: 2_000 } },
  });
});

afterAll(async () => {
  await h?.stop();
});

describe("signals to a suspended execution", () => {
  it("are kept for the recovery turn and do not use up recovery attempts", async () => {
    const { executionId } = await h.client.start({ workflow: "test.suspended.signals", input: {} });
    await h.waitForStatus(executionId, "suspended");
    const queue = h.runner().queue.queue;
    for (let n = 1; n <= 3; n++) {
      expect(await h.client.signal(executionId, "note", { n })).toEqual({ delivered: true });
      // Whatever the signal set off has settled once the job is parked again (or gone).
      for (;;) {
        const state = await queue.getJobState(executionId);
        if (state === "delayed" || state === "unknown" || state === "completed" || state === "failed") break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    const view = await h.client.view(executionId);
    expect(view.status).toBe("suspended");
    expect(view.recoveryAttempts).toBe(1);
    expect(await h.effectCount("provider.call")).toBe(1);

    dependencyUp = true;
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.output).toEqual({ notes: [1, 2, 3] });
  });
});
