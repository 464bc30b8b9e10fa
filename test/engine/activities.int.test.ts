import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ActivityRegistry, defineActivity } from "../../src/engine/activity.js";
import { BusinessError } from "../../src/engine/errors.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { activityQueueName } from "../../src/transport/queue-names.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/**
 * Activities on named queues: a step given an activity runs as a child job on the activity's own
 * queue, with that queue's worker pool, concurrency and rate limit, and its outcome is journaled.
 */

let h: EngineHarness;
let inFlight = 0;
let maxInFlight = 0;
const startedAt: number[] = [];
let flakyFailuresLeft = 0;

const Tag = z.object({ tag: z.string() });

const sign = defineActivity({
  name: "test.sign",
  queue: { name: "signing", concurrency: 2 },
  input: z.object({ tag: z.string(), amount: z.string() }),
  // A codec: bigint in the workflow, a decimal string in the journal.
  output: z.codec(z.string(), z.bigint(), { decode: (t) => BigInt(t), encode: (v) => v.toString() }),
  async run(input) {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      await h.recordEffect(`${input.tag}:sign`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      return BigInt(input.amount) * 2n;
    } finally {
      inFlight--;
    }
  },
});

class ProviderRefusal extends Error {
  readonly code = "PROVIDER_REFUSED";
}

const refuse = defineActivity({
  name: "test.refuse",
  queue: { name: "provider" },
  input: Tag,
  output: z.object({ ok: z.boolean() }),
  nonRetryable: [ProviderRefusal],
  async run(input) {
    await h.recordEffect(`${input.tag}:refuse`);
    throw new ProviderRefusal("the provider refused the intent");
  },
});

const flaky = defineActivity({
  name: "test.flaky",
  queue: { name: "provider" },
  input: Tag,
  output: z.object({ attempt: z.number() }),
  retry: { attempts: 2, initialDelayMs: 10 },
  async run(input, info) {
    await h.recordEffect(`${input.tag}:flaky`);
    if (flakyFailuresLeft > 0) {
      flakyFailuresLeft--;
      throw new Error("provider unavailable");
    }
    return { attempt: info.attempt };
  },
});

const limited = defineActivity({
  name: "test.limited",
  queue: { name: "rate-limited", concurrency: 4, limiter: { max: 2, durationMs: 1_000 } },
  input: Tag,
  output: z.object({ ok: z.boolean() }),
  async run() {
    startedAt.push(Date.now());
    return { ok: true };
  },
});

let failFastLeft = 0;

/** Fails its job at once (one attempt) while `failFastLeft` lasts: the failure policy's case. */
const failFast = defineActivity({
  name: "test.fail-fast",
  queue: { name: "provider" },
  input: Tag,
  output: z.object({ ok: z.boolean() }),
  retry: { attempts: 1 },
  async run(input) {
    await h.recordEffect(`${input.tag}:fail-fast`);
    if (failFastLeft > 0) {
      failFastLeft--;
      throw new Error("provider unavailable");
    }
    return { ok: true };
  },
});

/**
 * The activity's job fails while the turn that dispatched it still runs (a slow step beside it),
 * so the failure lands before the parent parks: BullMQ has no pending child left to wait for and
 * PostgreSQL has no outcome of the activity.
 */
const failsBeforeParkFlow = defineWorkflow({
  name: "test.activities.fails-before-park",
  version: 1,
  input: Tag,
  output: z.object({ ok: z.boolean(), slow: z.string() }),
  async run(ctx, input) {
    const [fast, slow] = await Promise.all([
      ctx.step("fail-fast", failFast, { input }),
      ctx.step("slow", async () => {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        return "done";
      }),
    ]);
    return { ok: fast.ok, slow };
  },
});

let releaseGate: () => void = () => {};
const gateOpen = () =>
  new Promise<void>((resolve) => {
    releaseGate = resolve;
  });
let gate = gateOpen();

const gated = defineActivity({
  name: "test.gated",
  queue: { name: "gated" },
  input: z.object({ tag: z.string(), secret: z.string() }),
  output: z.object({ ok: z.boolean() }),
  async run() {
    await gate;
    return { ok: true };
  },
});

const gatedFlow = defineWorkflow({
  name: "test.activities.gated",
  version: 1,
  input: Tag,
  output: z.object({ ok: z.boolean() }),
  async run(ctx, input) {
    return ctx.step("gated", gated, { input: { tag: input.tag, secret: "s3cr3t" } });
  },
});

const signTwice = defineWorkflow({
  name: "test.activities.sign",
  version: 1,
  input: Tag,
  output: z.object({ doubled: z.string(), after: z.string() }),
  async run(ctx, input) {
    const doubled = await ctx.step("sign", sign, { input: { tag: input.tag, amount: "21" } });
    // A later turn replays the activity from the journal (a bigint again) without running it.
    await ctx.waitForSignal("go", { schema: z.object({}) });
    const after = await ctx.step("after", () => (doubled + 1n).toString());
    return { doubled: doubled.toString(), after };
  },
});

const refused = defineWorkflow({
  name: "test.activities.refused",
  version: 1,
  input: Tag,
  output: z.object({ caught: z.string() }),
  async run(ctx, input) {
    try {
      await ctx.step("refuse", refuse, { input });
      return { caught: "none" };
    } catch (error) {
      if (error instanceof ProviderRefusal) return { caught: `${error.code}: ${error.message}` };
      throw new BusinessError("UNEXPECTED", String(error));
    }
  },
});

const flakyFlow = defineWorkflow({
  name: "test.activities.flaky",
  version: 1,
  input: Tag,
  output: z.object({ attempt: z.number() }),
  async run(ctx, input) {
    return ctx.step("flaky", flaky, { input });
  },
});

const limitedFlow = defineWorkflow({
  name: "test.activities.limited",
  version: 1,
  input: Tag,
  output: z.object({ ok: z.boolean() }),
  async run(ctx, input) {
    return ctx.step("limited", limited, { input });
  },
});

beforeAll(async () => {
  h = await startEngineHarness({
    file: import.meta.url,
    workflows: [signTwice, refused, flakyFlow, limitedFlow, gatedFlow, failsBeforeParkFlow],
    activities: [sign, refuse, flaky, limited, gated, failFast],
    durable: { recovery: { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 200 } },
  });
});

afterAll(async () => {
  await h?.stop();
});

describe("activities on named queues", () => {
  it("runs on the activity's own queue, journals the encoded result and replays it without re-running", async () => {
    const { executionId } = await h.client.start({ workflow: "test.activities.sign", input: { tag: "a1" } });
    const waiting = await h.waitForView(
      executionId,
      (v) => v.status === "waiting" && (v.waitingFor ?? []).some((w) => w.kind === "signal"),
      "waiting for go",
    );
    expect(waiting.status).toBe("waiting");
    const journal = await h.client.journal(executionId);
    expect(journal[0]).toMatchObject({ kind: "step", name: "sign", state: "ok", result: "42" });
    await h.client.signal(executionId, "go", {});
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.output).toEqual({ doubled: "42", after: "43" });
    expect(await h.effectCount("a1:sign")).toBe(1);
  });

  it("shows an activity wait while the job runs, and keeps the input out of the job payload", async () => {
    gate = gateOpen();
    const queue = new Queue(activityQueueName("gated"), {
      connection: h.producerRedis,
      prefix: h.config.redisPrefix,
    });
    try {
      const { executionId } = await h.client.start({
        workflow: "test.activities.gated",
        input: { tag: "g1" },
      });
      const view = await h.waitForView(executionId, (v) => v.status === "waiting", "waiting on the activity");
      expect(view.waitingFor).toEqual([
        { kind: "activity", name: "gated", position: 0, details: { activity: "test.gated", queue: "gated" } },
      ]);
      const job = await queue.getJob(`${executionId}.0`);
      expect(job?.data).toEqual({ executionId, position: 0, activity: "test.gated" });
      expect(JSON.stringify(job?.data)).not.toContain("s3cr3t");
      releaseGate();
      expect((await h.waitForStatus(executionId, "completed")).output).toEqual({ ok: true });
    } finally {
      releaseGate();
      await queue.close();
    }
  });

  it("respects the queue's concurrency across executions", async () => {
    maxInFlight = 0;
    const ids = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        h.client.start({ workflow: "test.activities.sign", input: { tag: `c${i}` } }),
      ),
    );
    for (const { executionId } of ids) {
      await h.waitForView(
        executionId,
        (v) => (v.waitingFor ?? []).some((w) => w.kind === "signal"),
        "past the activity",
      );
      await h.client.signal(executionId, "go", {});
    }
    for (const { executionId } of ids) await h.waitForStatus(executionId, "completed");
    expect(maxInFlight).toBe(2);
  });

  it("journals a refusal and re-raises it as the same class", async () => {
    const { executionId } = await h.client.start({
      workflow: "test.activities.refused",
      input: { tag: "r1" },
    });
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.output).toEqual({ caught: "PROVIDER_REFUSED: the provider refused the intent" });
    const journal = await h.client.journal(executionId);
    expect(journal[0]).toMatchObject({
      state: "error",
      error: { code: "PROVIDER_REFUSED", name: "ProviderRefusal" },
    });
    expect(await h.effectCount("r1:refuse")).toBe(1);
  });

  it("suspends the execution when the activity exhausts its retries, and resumes when it recovers", async () => {
    flakyFailuresLeft = 4; // two job runs of two attempts each
    const { executionId } = await h.client.start({ workflow: "test.activities.flaky", input: { tag: "f1" } });
    const suspended = await h.waitForStatus(executionId, "suspended");
    expect(suspended.waitingFor?.[0]).toMatchObject({ kind: "recovery", name: "flaky" });
    expect((await h.client.journal(executionId))[0]?.state).toBe("pending");
    const done = await h.waitForStatus(executionId, "completed", 20_000);
    expect(done.output).toEqual({ attempt: 1 });
    expect(await h.effectCount("f1:flaky")).toBe(5);
  });

  it("suspends the execution when the activity's job failed before the turn that dispatched it parked", async () => {
    failFastLeft = 1;
    const { executionId } = await h.client.start({
      workflow: "test.activities.fails-before-park",
      input: { tag: "fp1" },
    });
    // Without the check, the turn parked for a day: nothing in PostgreSQL said the wait was over.
    const suspended = await h.waitForStatus(executionId, "suspended", 15_000);
    expect(suspended.waitingFor?.[0]).toMatchObject({ kind: "recovery", name: "fail-fast" });
    const done = await h.waitForStatus(executionId, "completed", 20_000);
    expect(done.output).toEqual({ ok: true, slow: "done" });
    expect(await h.effectCount("fp1:fail-fast")).toBe(2);
  });

  it("applies the queue's rate limit: at most 2 starts per second", async () => {
    startedAt.length = 0;
    const ids = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        h.client.start({ workflow: "test.activities.limited", input: { tag: `l${i}` } }),
      ),
    );
    for (const { executionId } of ids) await h.waitForStatus(executionId, "completed", 20_000);
    const sorted = [...startedAt].sort((a, b) => a - b);
    expect(sorted).toHaveLength(4);
    // The third start had to wait for the limiter's next window.
    expect((sorted[2] as number) - (sorted[0] as number)).toBeGreaterThanOrEqual(900);
  });
});

describe("activity registration", () => {
  it("refuses a registry with two settings for one queue", () => {
    const other = { ...limited, name: "test.other", queue: { name: "rate-limited", concurrency: 1 } };
    expect(() => new ActivityRegistry([limited, other as typeof limited])).toThrow(
      /share queue rate-limited with different settings/,
    );
  });

  it("refuses to start a runner when a declared activity is not registered", async () => {
    expect(() => new ActivityRegistry([sign]).assertAllDeclaredRegistered()).toThrow(
      /activities declared but not registered with this runner: test.refuse, test.flaky, test.limited, test.fail-fast, test.gated/,
    );
  });
});
