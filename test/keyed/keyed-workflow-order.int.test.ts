import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { ExecutionView } from "../../src/engine/execution-client.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import type { LaneItem } from "../../src/keyed/keyed-lanes.js";
import { createExecutionClient } from "../../src/roles/create-execution-client.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/**
 * Per-key order of keyed workflows is their committed order (docs/keyed.md, "Order"), whatever
 * the order in which their enqueues reach Redis: two transfers from one account must not swap
 * because the first one's starter was slow (or died) between its commit and its enqueue.
 *
 * The first start goes through a client of its own whose gate holds its Redis enqueue back (or
 * never sends it: the process died after its commit); the second goes through the harness's
 * client. The repair's grace period (5 s) is longer than either case needs, so only the second
 * starter can put the first ahead of itself.
 */

const transfer = defineWorkflow({
  name: "test.keyed.transfer",
  version: 1,
  input: z.object({ account: z.string(), tag: z.string() }),
  output: z.object({ tag: z.string() }),
  key: (input) => `account:${input.account}`,
  async run(ctx, input) {
    await ctx.waitForSignal("go", { schema: z.object({}) });
    return { tag: input.tag };
  },
});

let h: EngineHarness;
let slow: ReturnType<typeof createExecutionClient>;

beforeAll(async () => {
  h = await startEngineHarness({ file: import.meta.url, workflows: [transfer] });
  slow = createExecutionClient({
    pool: h.pool,
    redis: h.producerRedis,
    prefix: h.config.redisPrefix,
    registry: h.registry,
    logger: h.logger,
  });
});

afterAll(async () => {
  await slow?.close();
  await h?.stop();
});

const onSignal = (view: ExecutionView) =>
  view.status === "waiting" && (view.waitingFor ?? []).some((w) => w.kind === "signal");
const keyWait = (view: ExecutionView) => (view.waitingFor ?? []).find((w) => w.kind === "key");

/** Makes the slow client's next keyed enqueue wait for `gate` (the real script runs after it). */
function holdNextEnqueue(gate: Promise<void>): { reached: Promise<void> } {
  const lanes = slow.keys.lanes;
  const original = lanes.enqueue.bind(lanes);
  let reachedResolve!: () => void;
  const reached = new Promise<void>((resolve) => {
    reachedResolve = resolve;
  });
  lanes.enqueue = async (items: readonly LaneItem[], mode?: "live" | "rebuild") => {
    lanes.enqueue = original;
    reachedResolve();
    await gate;
    return original(items, mode);
  };
  return { reached };
}

async function admissionStatus(executionId: string): Promise<string | undefined> {
  const { rows } = await h.pool.query<{ status: string }>(
    "SELECT status::text FROM keyed_commands WHERE id = $1",
    [executionId],
  );
  return rows[0]?.status;
}

/** The first of `ids` to reach its signal wait (which one started), after a short settle. */
async function firstStarted(ids: string[]): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    for (const id of ids) if (onSignal(await h.client.view(id))) return id;
    if (Date.now() > deadline) throw new Error("neither execution started within 10 s");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function finishInOrder(first: string, second: string): Promise<void> {
  await h.client.signal(first, "go", {});
  await h.waitForStatus(first, "completed");
  await h.waitForView(second, onSignal, "the second started after the first finished");
  await h.client.signal(second, "go", {});
  await h.waitForStatus(second, "completed");
}

describe("keyed workflow order", () => {
  it("a later start of the key does not overtake one committed before it whose enqueue is late", async () => {
    let release!: () => void;
    const { reached } = holdNextEnqueue(
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    const firstStart = slow.client.start({ workflow: transfer.name, input: { account: "1", tag: "first" } });
    await reached;
    // The first start is committed (execution and admission) and its enqueue has not reached Redis.
    const { rows } = await h.pool.query<{ id: string }>(
      "SELECT id FROM keyed_commands WHERE entity = '@workflow' AND key = 'account:1'",
    );
    expect(rows).toHaveLength(1);
    const first = (rows[0] as { id: string }).id;
    expect(await admissionStatus(first)).toBe("queued");

    const second = (await h.client.start({ workflow: transfer.name, input: { account: "1", tag: "second" } }))
      .executionId;
    expect(await firstStarted([first, second])).toBe(first);
    const secondView = await h.waitForView(
      second,
      (v) => keyWait(v)?.details?.ahead === 1,
      "second one behind",
    );
    expect(secondView.status).toBe("waiting");

    // The late enqueue arrives: it changes nothing.
    release();
    expect((await firstStart).executionId).toBe(first);
    expect(await admissionStatus(second)).toBe("queued");
    await finishInOrder(first, second);
  });

  it("a later start of the key does not overtake one whose starter died between commit and enqueue", async () => {
    const lanes = slow.keys.lanes;
    const original = lanes.enqueue.bind(lanes);
    lanes.enqueue = async () => {
      lanes.enqueue = original;
      throw new Error("the starter died before its enqueue");
    };
    await expect(
      slow.client.start({ workflow: transfer.name, input: { account: "2", tag: "first" } }),
    ).rejects.toThrow("died");
    const { rows } = await h.pool.query<{ id: string }>(
      "SELECT id FROM keyed_commands WHERE entity = '@workflow' AND key = 'account:2'",
    );
    const first = (rows[0] as { id: string }).id;

    const second = (await h.client.start({ workflow: transfer.name, input: { account: "2", tag: "second" } }))
      .executionId;
    expect(await firstStarted([first, second])).toBe(first);
    await h.waitForView(second, (v) => keyWait(v)?.details?.ahead === 1, "second one behind");
    await finishInOrder(first, second);
  });
});
