import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ENGINE_ERRORS } from "../../src/engine/error-codes.js";
import type { ExecutionClient } from "../../src/engine/execution-client.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { createExecutionClient } from "../../src/roles/create-execution-client.js";
import type { ExecutionQueue } from "../../src/runtime/execution-queue.js";
import { executionJobId } from "../../src/transport/queue-names.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/**
 * Starts and children batched per tick (docs/performance.md, "Where the time goes"): the starts
 * made in one turn of the event loop share one INSERT and one BullMQ pipeline, the children a turn
 * starts together share one INSERT, and their resolutions one UPDATE, while every caller keeps its
 * own answer: an idempotency conflict or a row PostgreSQL refuses fails only its own start.
 * Statements are counted on the engine's pool as they pass (the database still runs them).
 */

let h: EngineHarness;
let client: ExecutionClient;
let queue: ExecutionQueue;
let closeClient: () => Promise<void>;
/** Names or first words of every statement sent through the engine's pool since the last reset. */
let sent: string[] = [];

const noop = defineWorkflow({
  name: "test.batching.noop",
  version: 1,
  input: z.object({ tag: z.string() }),
  output: z.object({ tag: z.string() }),
  async run(_ctx, input) {
    return input;
  },
});

const leaf = defineWorkflow({
  name: "test.batching.leaf",
  version: 1,
  input: z.object({ n: z.number().int() }),
  output: z.object({ n: z.number().int() }),
  async run(ctx, input) {
    return { n: await ctx.step("work", () => input.n) };
  },
});

const CHILDREN = 8;

const fanout = defineWorkflow({
  name: "test.batching.fanout",
  version: 1,
  input: z.object({}),
  output: z.object({ sum: z.number().int() }),
  async run(ctx) {
    const outputs = await Promise.all(Array.from({ length: CHILDREN }, (_, n) => ctx.child(leaf, { n })));
    return { sum: outputs.reduce((acc, o) => acc + o.n, 0) };
  },
});

const gated = defineWorkflow({
  name: "test.batching.gated",
  version: 1,
  input: z.object({}),
  output: z.object({ n: z.number().int() }),
  async run(ctx) {
    await ctx.waitForSignal("go", { schema: z.object({}) });
    return { n: 100 };
  },
});

const gatedFanout = defineWorkflow({
  name: "test.batching.gated-fanout",
  version: 1,
  input: z.object({}),
  output: z.object({ sum: z.number().int() }),
  async run(ctx) {
    const outputs = await Promise.all([
      ctx.child(gated, {}),
      ...Array.from({ length: 3 }, (_, n) => ctx.child(leaf, { n })),
    ]);
    return { sum: outputs.reduce((acc, o) => acc + o.n, 0) };
  },
});

beforeAll(async () => {
  h = await startEngineHarness({
    file: import.meta.url,
    workflows: [noop, leaf, fanout, gated, gatedFanout],
  });
  // A value the engine's storable check lets through but the server refuses (as it would a value
  // it cannot convert): the shared insert fails for every row, and only this start may fail.
  await h.db.pool.query(`
    CREATE FUNCTION refuse_marked_input() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.input::text LIKE '%refused-by-the-server%' THEN
        RAISE EXCEPTION 'unsupported Unicode escape sequence' USING ERRCODE = '22P05';
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER refuse_marked_inputs BEFORE INSERT ON executions
      FOR EACH ROW EXECUTE FUNCTION refuse_marked_input();`);
  const original = h.pool.query.bind(h.pool) as (...args: unknown[]) => unknown;
  (h.pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const first = args[0] as string | { name?: string; text: string };
    sent.push(typeof first === "string" ? first.trim() : (first.name ?? first.text.trim()));
    return original(...args);
  };
  const side = createExecutionClient({
    pool: h.pool,
    redis: h.producerRedis,
    prefix: h.config.redisPrefix,
    registry: h.registry,
    logger: h.logger,
  });
  ({ client, queue } = side);
  closeClient = side.close;
});

afterAll(async () => {
  await closeClient?.();
  await h?.stop();
});

function countOf(name: string): number {
  return sent.filter((s) => s === name).length;
}

describe("starts in one tick", () => {
  it("share one insert and one pipeline of job adds; each caller gets its own execution", async () => {
    let pipelines = 0;
    const addBulk = queue.queue.addBulk.bind(queue.queue);
    queue.queue.addBulk = (jobs) => {
      pipelines++;
      return addBulk(jobs);
    };
    sent = [];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => client.start({ workflow: noop.name, input: { tag: `t${i}` } })),
    );
    expect(countOf("tenor_insert_executions")).toBe(1);
    expect(pipelines).toBe(1);
    expect(new Set(results.map((r) => r.executionId)).size).toBe(20);
    expect(results.every((r) => r.created)).toBe(true);
    for (const [i, { executionId }] of results.entries()) {
      expect((await client.view(executionId)).status).not.toBe("failed");
      const job = await queue.queue.getJob(executionJobId(executionId));
      // The runner may already have finished it (its job then removed): the row says so.
      if (!job) expect((await client.view(executionId)).status).toBe("completed");
      const input = await h.pool.query("SELECT input FROM executions WHERE id = $1", [executionId]);
      expect(input.rows[0].input).toEqual({ tag: `t${i}` });
    }
  });

  it("an idempotency conflict or a refused row fails only its own start", async () => {
    const key = `key-${Date.now()}`;
    sent = [];
    const outcomes = await Promise.allSettled([
      client.start({ workflow: noop.name, input: { tag: "first" }, idempotencyKey: key }),
      client.start({ workflow: noop.name, input: { tag: "other body" }, idempotencyKey: key }),
      client.start({ workflow: noop.name, input: { tag: "first" }, idempotencyKey: key }),
      // Refused by the server (the trigger above, SQLSTATE 22P05): the statement fails for every row.
      client.start({ workflow: noop.name, input: { tag: "refused-by-the-server" } }),
      client.start({ workflow: noop.name, input: { tag: "unrelated" } }),
      // Refused before any statement: jsonb cannot hold U+0000 (src/values/storable.ts).
      client.start({ workflow: noop.name, input: { tag: "bad\u0000tag" } }),
    ]);
    const [first, conflicting, replayed, refused, unrelated, unstorable] = outcomes;
    if (
      first?.status !== "fulfilled" ||
      replayed?.status !== "fulfilled" ||
      unrelated?.status !== "fulfilled"
    )
      throw new Error(`a start that should succeed failed: ${JSON.stringify(outcomes)}`);
    expect(first.value.created).toBe(true);
    expect(replayed.value).toEqual({ executionId: first.value.executionId, created: false });
    expect(unrelated.value.created).toBe(true);
    expect(conflicting?.status).toBe("rejected");
    expect((conflicting as PromiseRejectedResult).reason.code).toBe(ENGINE_ERRORS.IDEMPOTENCY_KEY_REUSED);
    expect(refused?.status).toBe("rejected");
    expect((refused as PromiseRejectedResult).reason.code).toBe("22P05");
    expect(unstorable?.status).toBe("rejected");
    expect((unstorable as PromiseRejectedResult).reason.code).toBe(ENGINE_ERRORS.INPUT_INVALID);
    const { rows } = await h.pool.query(
      "SELECT count(*)::int AS n FROM executions WHERE idempotency_key = $1",
      [key],
    );
    expect(rows[0].n).toBe(1);
    // One release of expired keys for the three keyed starts, not one each.
    expect(
      countOf(sent.find((s) => s.startsWith("UPDATE executions SET idempotency_key = NULL")) ?? ""),
    ).toBe(1);
  });
});

describe("children a turn starts together", () => {
  it("share one insert, and each later turn resolves them in one statement", async () => {
    sent = [];
    const { executionId } = await client.start({ workflow: fanout.name, input: {} });
    const view = await h.waitForStatus(executionId, "completed", 60_000);
    expect(view.output).toEqual({ sum: (CHILDREN * (CHILDREN - 1)) / 2 });
    const { rows } = await h.pool.query(
      "SELECT (SELECT turn FROM executions WHERE id = $1) AS turns, count(*)::int AS children FROM executions WHERE parent_id = $1",
      [executionId],
    );
    expect(rows[0].children).toBe(CHILDREN);
    expect(countOf("tenor_insert_child_executions")).toBe(1);
    // Every turn after the first resolves the children it finds finished in one statement.
    const resolutions = countOf("tenor_resolve_entries");
    expect(resolutions).toBeGreaterThanOrEqual(1);
    expect(resolutions).toBeLessThanOrEqual(rows[0].turns - 1);
    expect(resolutions).toBeLessThan(CHILDREN);
    // The first turn does not look up children it is about to create; each later turn looks up
    // the pending ones in one statement.
    expect(countOf("tenor_summaries")).toBeLessThanOrEqual(rows[0].turns - 1);
  });
});

describe("a turn after a clean park", () => {
  it("does not add the jobs of children an earlier turn dispatched", async () => {
    const { executionId } = await client.start({ workflow: gatedFanout.name, input: {} });
    // The three leaves finish and wake the parent: a later turn resolves them while the gated
    // child is still pending, and parks again.
    for (let polls = 0; !(await parkedAfterLeaves(executionId)); polls++) {
      if (polls > 600) throw new Error("the parent never resolved its three leaves and parked again");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [{ id: gatedId }] = (
      await h.pool.query("SELECT id FROM executions WHERE parent_id = $1 AND workflow = $2", [
        executionId,
        gated.name,
      ])
    ).rows as [{ id: string }];
    await client.signal(gatedId, "go", {});
    const view = await h.waitForStatus(executionId, "completed", 30_000);
    expect(view.output).toEqual({ sum: 103 });
    // BullMQ answers the add of a job that exists with a `duplicated` event: none for a child.
    const events = (await h.producerRedis.xrange(`${queue.queue.qualifiedName}:events`, "-", "+")) as Array<
      [string, string[]]
    >;
    const duplicated = events
      .filter(([, fields]) => fields[1] === "duplicated")
      .map(([, fields]) => fields[3]);
    expect(duplicated).not.toContain(executionJobId(gatedId));
  });
});

async function parkedAfterLeaves(executionId: string): Promise<boolean> {
  const { rows } = await h.pool.query(
    `SELECT e.status, (SELECT count(*)::int FROM journal_entries j
                       WHERE j.execution_id = e.id AND j.kind = 'child' AND j.state = 'ok') AS resolved
     FROM executions e WHERE e.id = $1`,
    [executionId],
  );
  return rows[0]?.status === "waiting" && rows[0]?.resolved === 3;
}
