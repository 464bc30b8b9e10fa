import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/**
 * Suspension: a transient failure that outlasts the step's immediate retries suspends the
 * execution; recovery retries with backoff, at most `durable.recovery.maxAttempts` times.
 */

let h: EngineHarness;

const MAX_RECOVERIES = 3;
const STEP_ATTEMPTS = 2;

/** Dependencies that are "up", by tag; a step whose dependency is down throws a transient error. */
const up = new Set<string>();

const Input = z.object({ tag: z.string(), failFirst: z.number().default(0) });

const dependent = defineWorkflow({
  name: "test.recovery.dependent",
  version: 1,
  input: Input,
  output: z.object({ value: z.string() }),
  async run(ctx, input) {
    const value = await ctx.step(
      "provider.call",
      async () => {
        await h.recordEffect(`${input.tag}:call`);
        if (!up.has(input.tag)) throw new Error(`provider for ${input.tag} unreachable`);
        return "answered";
      },
      { retry: { attempts: STEP_ATTEMPTS, initialDelayMs: 5, maxDelayMs: 10 } },
    );
    return { value };
  },
});

/** Two separate outages: the first one recovers, the second never does. */
const twoOutages = defineWorkflow({
  name: "test.recovery.two-outages",
  version: 1,
  input: Input,
  output: z.object({}),
  async run(ctx, input) {
    await ctx.step(
      "first.call",
      async () => {
        const calls = await h.recordEffect(`${input.tag}:first`);
        if (calls <= input.failFirst) throw new Error("first dependency unreachable");
        return null;
      },
      { retry: { attempts: STEP_ATTEMPTS, initialDelayMs: 5, maxDelayMs: 10 } },
    );
    await ctx.step(
      "second.call",
      async () => {
        await h.recordEffect(`${input.tag}:second`);
        throw new Error("second dependency unreachable");
      },
      { retry: { attempts: STEP_ATTEMPTS, initialDelayMs: 5, maxDelayMs: 10 } },
    );
    return {};
  },
});

beforeAll(async () => {
  h = await startEngineHarness({
    file: import.meta.url,
    workflows: [dependent, twoOutages],
    // Delays of about 0.3, 0.6, 1.2 s: long enough to watch the suspension, short enough to exhaust.
    durable: { recovery: { maxAttempts: MAX_RECOVERIES, baseDelayMs: 300, maxDelayMs: 2_000 } },
  });
});

afterAll(async () => {
  await h?.stop();
});

describe("suspension and recovery", () => {
  it("suspends naming the step, and resumes to completed once the dependency is back", async () => {
    const { executionId } = await h.client.start({
      workflow: "test.recovery.dependent",
      input: { tag: "back" },
    });
    const suspended = await h.waitForStatus(executionId, "suspended");
    expect(suspended.hold).toBeNull();
    expect(suspended.waitingFor).toEqual([
      expect.objectContaining({
        kind: "recovery",
        name: "provider.call",
        position: 0,
        until: expect.any(String),
      }),
    ]);
    expect(suspended.recoveryAttempts).toBeGreaterThanOrEqual(1);
    up.add("back");
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.output).toEqual({ value: "answered" });
    expect(done.recoveryAttempts).toBe(0);
    const journal = await h.client.journal(executionId);
    expect(journal).toHaveLength(1);
    expect(journal[0]).toMatchObject({ name: "provider.call", state: "ok", result: "answered" });
  });

  it("fails RECOVERY_EXHAUSTED after the bounded recoveries, journaling nothing for the step", async () => {
    const { executionId } = await h.client.start({
      workflow: "test.recovery.dependent",
      input: { tag: "down" },
    });
    const failed = await h.waitForStatus(executionId, "failed");
    expect(failed.failure).toMatchObject({
      code: "RECOVERY_EXHAUSTED",
      retryable: true,
      details: { step: "provider.call", attempts: MAX_RECOVERIES },
    });
    // The first turn plus one turn per recovery, each with the step's immediate retries.
    expect(await h.effectCount("down:call")).toBe((1 + MAX_RECOVERIES) * STEP_ATTEMPTS);
    expect(await h.client.journal(executionId)).toEqual([]);
  });

  it("bounds each outage on its own: an earlier, recovered outage does not use up a later one's recoveries", async () => {
    const { executionId } = await h.client.start({
      workflow: "test.recovery.two-outages",
      input: { tag: "two", failFirst: 2 * STEP_ATTEMPTS },
    });
    const failed = await h.waitForStatus(executionId, "failed");
    expect(failed.failure).toMatchObject({
      code: "RECOVERY_EXHAUSTED",
      details: { step: "second.call", attempts: MAX_RECOVERIES },
    });
    expect(await h.effectCount("two:first")).toBe(2 * STEP_ATTEMPTS + 1);
    expect(await h.effectCount("two:second")).toBe((1 + MAX_RECOVERIES) * STEP_ATTEMPTS);
    const journal = await h.client.journal(executionId);
    expect(journal.map((e) => e.name)).toEqual(["first.call"]);
  });
});
