import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import type { TenorError } from "../../src/errors/tenor-error.js";
import { startRunnerEngine } from "../../src/roles/runner-engine.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";
import { newExecution } from "../support/new-execution.js";

/** The execution client's refusals, and the runner's refusal to start with a workflow missing. */

let h: EngineHarness;

const greet = defineWorkflow({
  name: "test.client.greet",
  version: 1,
  input: z.object({ name: z.string().min(2), times: z.number().int().positive() }),
  output: z.object({ greeting: z.string() }),
  async run(ctx, input) {
    const reply = await ctx.waitForSignal("reply", {
      schema: z.object({ text: z.string() }),
      timeout: "30s",
    });
    return { greeting: `${input.name}×${input.times}:${reply.timedOut ? "-" : reply.payload.text}` };
  },
});

const quick = defineWorkflow({
  name: "test.client.quick",
  version: 1,
  input: z.object({}),
  output: z.object({ ok: z.boolean() }),
  async run() {
    return { ok: true };
  },
});

/** Declared but left out of the registry by the registration test. */
const forgotten = defineWorkflow({
  name: "test.client.forgotten",
  version: 1,
  input: z.object({}),
  output: z.object({}),
  async run() {
    return {};
  },
});

beforeAll(async () => {
  h = await startEngineHarness({ file: import.meta.url, workflows: [greet, quick, forgotten] });
});

afterAll(async () => {
  await h?.stop();
});

/** Runs `action` and returns what it threw, failing the test if it did not throw. */
async function refusal(action: () => Promise<unknown>): Promise<TenorError> {
  try {
    await action();
  } catch (error) {
    return error as TenorError;
  }
  throw new Error("expected a refusal, but the call succeeded");
}

describe("execution client", () => {
  it("starts idempotently: same key and input give the same execution, another input is refused", async () => {
    const request = {
      workflow: "test.client.greet",
      input: { name: "ada", times: 2 },
      idempotencyKey: "greet-ada",
      orgId: "org-a",
    };
    const first = await h.client.start(request);
    expect(first.created).toBe(true);
    const again = await h.client.start({ ...request, input: { times: 2, name: "ada" } });
    expect(again).toEqual({ executionId: first.executionId, created: false });
    const reused = await refusal(() => h.client.start({ ...request, input: { name: "ada", times: 3 } }));
    expect(reused.code).toBe("IDEMPOTENCY_KEY_REUSED");
    expect(reused.details).toMatchObject({ idempotencyKey: "greet-ada", executionId: first.executionId });
    const { rows } = await h.db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM executions WHERE idempotency_key = 'greet-ada'",
    );
    expect(rows[0]?.n).toBe(1);
  });

  it("refuses an unknown workflow with WORKFLOW_UNKNOWN", async () => {
    const error = await refusal(() => h.client.start({ workflow: "test.client.nope", input: {} }));
    expect(error.code).toBe("WORKFLOW_UNKNOWN");
    expect(error.details).toMatchObject({ workflow: "test.client.nope" });
  });

  it("refuses invalid input with INPUT_INVALID naming each field", async () => {
    const error = await refusal(() =>
      h.client.start({ workflow: "test.client.greet", input: { name: "a", times: -1 } }),
    );
    expect(error.code).toBe("INPUT_INVALID");
    const issues = (error.details as { issues: { path: string; message: string }[] }).issues;
    expect(issues.map((i) => i.path).sort()).toEqual(["name", "times"]);
    const { rows } = await h.db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM executions WHERE workflow = 'test.client.greet' AND input->>'name' = 'a'",
    );
    expect(rows[0]?.n).toBe(0);
  });

  it("refuses a signal to a terminal execution with EXECUTION_TERMINAL", async () => {
    const { executionId } = await h.client.start({ workflow: "test.client.quick", input: {} });
    await h.waitForStatus(executionId, "completed");
    const error = await refusal(() => h.client.signal(executionId, "late", {}));
    expect(error.code).toBe("EXECUTION_TERMINAL");
    const { rows } = await h.db.pool.query("SELECT 1 FROM signals WHERE execution_id = $1", [executionId]);
    expect(rows).toHaveLength(0);
  });

  it("delivers a batch of signals in one statement, once per key, and reports a terminal or missing execution", async () => {
    const waiting = await Promise.all(
      ["ab", "cd"].map(async (name) => {
        const { executionId } = await h.client.start({
          workflow: "test.client.greet",
          input: { name, times: 1 },
        });
        await h.waitForStatus(executionId, "waiting");
        return executionId;
      }),
    );
    const { executionId: done } = await h.client.start({ workflow: "test.client.quick", input: {} });
    await h.waitForStatus(done, "completed");
    const aside = [{ executionId: waiting[0] as string, name: "aside", payload: 1, idempotencyKey: "aside" }];
    expect([...(await h.client.signalMany(aside)).values()]).toEqual(["delivered"]);
    expect([...(await h.client.signalMany(aside)).values()]).toEqual(["repeated"]);
    const missing = "00000000-0000-4000-8000-000000000000";
    const batch = [...waiting, done, missing].map((executionId) => ({
      executionId,
      name: "reply",
      payload: { text: "hi" },
      idempotencyKey: `${executionId}:reply`,
    }));
    const first = await h.client.signalMany(batch);
    expect(Object.fromEntries(first)).toEqual({
      [waiting[0] as string]: "delivered",
      [waiting[1] as string]: "delivered",
      [done]: "terminal",
      [missing]: "missing",
    });
    for (const id of waiting) {
      const view = await h.waitForStatus(id, "completed");
      expect(view.output).toEqual({ greeting: expect.stringMatching(/×1:hi$/) });
    }
    // The same batch again (the watcher's next tick): nothing stored twice.
    const again = await h.client.signalMany(batch.slice(0, 2));
    expect([...again.values()]).toEqual(["terminal", "terminal"]);
    const { rows } = await h.db.pool.query<{ n: number; at: number }>(
      "SELECT count(*)::int AS n, count(DISTINCT created_at)::int AS at FROM signals WHERE execution_id = ANY($1::uuid[]) AND name = 'reply'",
      [[...waiting, done]],
    );
    expect(rows[0]).toEqual({ n: 2, at: 1 });
  });

  it("hides an execution from another organisation (EXECUTION_NOT_FOUND) and lets its own one in", async () => {
    const { executionId } = await h.client.start({
      workflow: "test.client.greet",
      input: { name: "bob", times: 1 },
      orgId: "org-a",
    });
    await h.waitForStatus(executionId, "waiting");
    expect((await refusal(() => h.client.view(executionId, "org-b"))).code).toBe("EXECUTION_NOT_FOUND");
    expect((await refusal(() => h.client.journal(executionId, "org-b"))).code).toBe("EXECUTION_NOT_FOUND");
    const signal = await refusal(() =>
      h.client.signal(executionId, "reply", { text: "hi" }, { orgId: "org-b" }),
    );
    expect(signal.code).toBe("EXECUTION_NOT_FOUND");
    const { rows } = await h.db.pool.query("SELECT 1 FROM signals WHERE execution_id = $1", [executionId]);
    expect(rows).toHaveLength(0);
    expect((await refusal(() => h.client.view("not-a-uuid"))).code).toBe("EXECUTION_NOT_FOUND");

    await h.client.signal(executionId, "reply", { text: "hi" }, { orgId: "org-a" });
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.output).toEqual({ greeting: "bob×1:hi" });
  });
});

describe("unknown workflows on the runner", () => {
  it("hold an execution of a workflow this release does not know (WORKFLOW_UNKNOWN), not fail it", async () => {
    const { summary } = await h.store.createExecution(
      newExecution({ workflow: "test.client.from-another-release" }),
    );
    await h.runner().queue.enqueue(summary.id, summary.workflow);
    const held = await h.waitForView(summary.id, (v) => v.hold !== null, "a hold");
    expect(held.status).toBe("suspended");
    expect(held.failure).toBeNull();
    expect(held.hold).toMatchObject({ code: "WORKFLOW_UNKNOWN" });
  });
});

describe("runner registration", () => {
  it("refuses to start (WORKFLOW_NOT_REGISTERED) when a declared workflow is missing", async () => {
    const error = await refusal(() =>
      startRunnerEngine({
        config: h.config,
        registry: new WorkflowRegistry([greet, quick]),
        logger: h.logger,
        pool: h.pool,
        workerRedis: h.workerRedis,
        producerRedis: h.producerRedis,
      }),
    );
    expect(error.code).toBe("WORKFLOW_NOT_REGISTERED");
    expect(error.details).toEqual({ missing: ["test.client.forgotten"] });
    expect(error.message).toContain("test.client.forgotten");
  });
});
