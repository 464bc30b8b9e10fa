import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/** Durable waits: timers, signals (buffering, order, idempotency, deadlines) and conditions. */

let h: EngineHarness;

const Tag = z.object({ tag: z.string() });
const Payload = z.object({ n: z.number() });
const Signalled = z.union([
  z.object({ timedOut: z.literal(true) }),
  z.object({ timedOut: z.literal(false), payload: Payload }),
]);

const napper = defineWorkflow({
  name: "test.waits.sleep",
  version: 1,
  input: Tag,
  output: z.object({ slept: z.boolean() }),
  async run(ctx) {
    await ctx.sleep("nap", "700ms");
    return { slept: true };
  },
});

/** Sleeps first, so a signal sent while it sleeps arrives before the wait exists. */
const earlyBird = defineWorkflow({
  name: "test.waits.early",
  version: 1,
  input: Tag,
  output: z.object({ received: z.array(Signalled) }),
  async run(ctx) {
    await ctx.sleep("before", "500ms");
    const a = await ctx.waitForSignal("item", { schema: Payload });
    const b = await ctx.waitForSignal("item", { schema: Payload });
    const c = await ctx.waitForSignal("item", { schema: Payload, timeout: "300ms" });
    return { received: [a, b, c] };
  },
});

const voter = defineWorkflow({
  name: "test.waits.votes",
  version: 1,
  input: Tag,
  output: z.object({ received: z.array(Signalled) }),
  async run(ctx) {
    const first = await ctx.waitForSignal("vote", { schema: Payload });
    const second = await ctx.waitForSignal("vote", { schema: Payload, timeout: "500ms" });
    return { received: [first, second] };
  },
});

const deadline = defineWorkflow({
  name: "test.waits.deadline",
  version: 1,
  input: Tag,
  output: Signalled,
  async run(ctx) {
    return ctx.waitForSignal("approval", { schema: Payload, timeout: "800ms" });
  },
});

/**
 * The lost wake-up race: a step fires the signal (not awaited, after a random pause) just before
 * the body waits for it, so delivery lands anywhere between "no signal yet" and "job parked".
 */
const racer = defineWorkflow({
  name: "test.waits.race",
  version: 1,
  input: z.object({ tag: z.string(), pauseMs: z.number() }),
  output: z.object({ n: z.number() }),
  async run(ctx, input) {
    await ctx.step("signal", ({ executionId }) => {
      setTimeout(() => {
        h.client.signal(executionId, "bell", { n: input.pauseMs }).catch(() => undefined);
      }, input.pauseMs);
      return null;
    });
    const bell = await ctx.waitForSignal("bell", { schema: Payload });
    if (bell.timedOut) throw new Error("no deadline was set");
    return { n: bell.payload.n };
  },
});

/** The same race from outside: the test signals at random moments while the turn runs. */
const listener = defineWorkflow({
  name: "test.waits.listener",
  version: 1,
  input: Tag,
  output: z.object({ n: z.number() }),
  async run(ctx) {
    await ctx.step("prepare", () => null);
    const bell = await ctx.waitForSignal("bell", { schema: Payload });
    return { n: bell.timedOut ? -1 : bell.payload.n };
  },
});

const poller = defineWorkflow({
  name: "test.waits.condition",
  version: 1,
  input: z.object({ tag: z.string(), needed: z.number(), timeout: z.string() }),
  output: z.union([z.object({ satisfied: z.literal(true) }), z.object({ timedOut: z.literal(true) })]),
  async run(ctx, input) {
    return ctx.waitFor("balance", {
      check: async () => (await h.recordEffect(`${input.tag}:poll`)) >= input.needed,
      every: "100ms",
      timeout: input.timeout as `${number}ms`,
    });
  },
});

beforeAll(async () => {
  h = await startEngineHarness({
    file: import.meta.url,
    workflows: [napper, earlyBird, voter, deadline, racer, listener, poller],
  });
});

afterAll(async () => {
  await h?.stop();
});

describe("sleep", () => {
  it("waits on a timer the projection shows, then completes", async () => {
    const { executionId } = await h.client.start({ workflow: "test.waits.sleep", input: { tag: "s" } });
    const waiting = await h.waitForStatus(executionId, "waiting");
    expect(waiting.waitingFor).toEqual([
      { kind: "timer", name: "nap", position: 0, until: expect.any(String) },
    ]);
    const until = Date.parse(waiting.waitingFor?.[0]?.until ?? "");
    expect(until).toBeGreaterThan(Date.parse(waiting.createdAt));
    expect(waiting.wakeAt).toBe(new Date(until).toISOString());
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.output).toEqual({ slept: true });
  });
});

describe("waitForSignal", () => {
  it("keeps signals sent before the wait and consumes them in arrival order, each once", async () => {
    const { executionId } = await h.client.start({ workflow: "test.waits.early", input: { tag: "e" } });
    await h.waitForView(
      executionId,
      (v) => v.status === "waiting" && v.waitingFor?.[0]?.kind === "timer",
      "the timer wait",
    );
    expect(await h.client.signal(executionId, "item", { n: 1 })).toEqual({ delivered: true });
    expect(await h.client.signal(executionId, "item", { n: 2 })).toEqual({ delivered: true });
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.output).toEqual({
      received: [
        { timedOut: false, payload: { n: 1 } },
        { timedOut: false, payload: { n: 2 } },
        { timedOut: true },
      ],
    });
    const { rows } = await h.db.pool.query(
      "SELECT payload, consumed_position FROM signals WHERE execution_id = $1 ORDER BY id",
      [executionId],
    );
    expect(rows).toEqual([
      { payload: { n: 1 }, consumed_position: 1 },
      { payload: { n: 2 }, consumed_position: 2 },
    ]);
  });

  it("dedupes a signal by its idempotency key", async () => {
    const { executionId } = await h.client.start({ workflow: "test.waits.votes", input: { tag: "v" } });
    await h.waitForStatus(executionId, "waiting");
    const options = { idempotencyKey: "vote-1" };
    expect(await h.client.signal(executionId, "vote", { n: 7 }, options)).toEqual({ delivered: true });
    expect(await h.client.signal(executionId, "vote", { n: 7 }, options)).toEqual({ delivered: false });
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.output).toEqual({ received: [{ timedOut: false, payload: { n: 7 } }, { timedOut: true }] });
  });

  it("shows the signal and its deadline in the projection and times out at the deadline", async () => {
    const { executionId } = await h.client.start({ workflow: "test.waits.deadline", input: { tag: "d" } });
    const waiting = await h.waitForStatus(executionId, "waiting");
    expect(waiting.waitingFor).toEqual([
      { kind: "signal", name: "approval", position: 0, until: expect.any(String) },
    ]);
    expect(waiting.wakeAt).toBe(waiting.waitingFor?.[0]?.until);
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.output).toEqual({ timedOut: true });
    const journal = await h.client.journal(executionId);
    expect(journal[0]).toMatchObject({ kind: "signal", state: "ok", result: { timedOut: true } });
  });

  it("never loses a wake-up when the signal races the turn that starts waiting (from a step)", async () => {
    const starts = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        h.client.start({ workflow: "test.waits.race", input: { tag: `r${i}`, pauseMs: i % 20 } }),
      ),
    );
    for (const [i, { executionId }] of starts.entries()) {
      const view = await h.waitForStatus(executionId, "completed", 15_000);
      expect(view.output).toEqual({ n: i % 20 });
    }
  });

  it("never loses a wake-up when the signal races the turn that starts waiting (from outside)", async () => {
    for (let round = 0; round < 5; round++) {
      const ids = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const { executionId } = await h.client.start({
            workflow: "test.waits.listener",
            input: { tag: `l${round}-${i}` },
          });
          await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 30)));
          await h.client.signal(executionId, "bell", { n: i });
          return executionId;
        }),
      );
      for (const [i, id] of ids.entries()) {
        const view = await h.waitForStatus(id, "completed", 15_000);
        expect(view.output).toEqual({ n: i });
      }
    }
  });
});

describe("waitFor", () => {
  it("polls durably until the condition holds", async () => {
    const { executionId } = await h.client.start({
      workflow: "test.waits.condition",
      input: { tag: "c1", needed: 3, timeout: "20000ms" },
    });
    const waiting = await h.waitForStatus(executionId, "waiting");
    expect(waiting.waitingFor?.[0]).toMatchObject({
      kind: "condition",
      name: "balance",
      until: expect.any(String),
    });
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.output).toEqual({ satisfied: true });
    expect(await h.effectCount("c1:poll")).toBe(3);
  });

  it("times out at its deadline", async () => {
    const { executionId } = await h.client.start({
      workflow: "test.waits.condition",
      input: { tag: "c2", needed: 1_000_000, timeout: "600ms" },
    });
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.output).toEqual({ timedOut: true });
    expect(await h.effectCount("c2:poll")).toBeGreaterThan(1);
  });
});
