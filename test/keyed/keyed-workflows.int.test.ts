import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { ExecutionView } from "../../src/engine/execution-client.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { KeyedLanes } from "../../src/keyed/keyed-lanes.js";
import { KEYED_SPACES } from "../../src/transport/queue-names.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/**
 * Keyed workflows (docs/keyed.md, "Keyed workflows"): executions of one key run one at a time in
 * arrival order; a new one for a busy key waits visibly (its projection names the key and how many
 * are ahead); other keys run in parallel; a terminal execution hands its slot to the next.
 */

const gated = defineWorkflow({
  name: "test.keyed.gated",
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

beforeAll(async () => {
  h = await startEngineHarness({ file: import.meta.url, workflows: [gated] });
});

afterAll(async () => {
  await h?.stop();
});

const keyWait = (view: ExecutionView) => (view.waitingFor ?? []).find((w) => w.kind === "key");
const onSignal = (view: ExecutionView) =>
  view.status === "waiting" && (view.waitingFor ?? []).some((w) => w.kind === "signal");

describe("keyed workflows", () => {
  it("runs one execution per key at a time, shows the line, and hands the slot on in order", async () => {
    const start = async (account: string, tag: string) =>
      (await h.client.start({ workflow: gated.name, input: { account, tag } })).executionId;
    const a = await start("1", "a");
    await h.waitForView(a, onSignal, "a waiting on its signal");
    const b = await start("1", "b");
    const c = await start("1", "c");
    const other = await start("2", "other");

    // A different key runs in parallel; the same key waits, saying which key and how many are ahead.
    await h.waitForView(other, onSignal, "the other key's execution running in parallel");
    const bView = await h.waitForView(b, (v) => keyWait(v)?.details?.ahead === 1, "b one behind");
    expect(bView.status).toBe("waiting");
    expect(keyWait(bView)).toEqual({ kind: "key", name: "account:1", details: { ahead: 1 } });
    const cView = await h.waitForView(c, (v) => keyWait(v)?.details?.ahead === 2, "c two behind");
    expect(cView.status).toBe("waiting");
    expect(await h.client.journal(b)).toEqual([]);

    // Signals sent early are kept: c's signal does not let it jump the line.
    await h.client.signal(c, "go", {});
    await h.client.signal(a, "go", {});
    await h.waitForStatus(a, "completed");
    await h.waitForView(b, onSignal, "b admitted after a finished");
    await h.waitForView(c, (v) => keyWait(v)?.details?.ahead === 1, "c one behind");
    expect((await h.client.view(c)).status).toBe("waiting");

    await h.client.signal(b, "go", {});
    await h.waitForStatus(b, "completed");
    const cDone = await h.waitForStatus(c, "completed");
    expect(cDone.output).toEqual({ tag: "c" });
    const aView = await h.client.view(a);
    const bDone = await h.client.view(b);
    expect(Date.parse(aView.completedAt as string)).toBeLessThanOrEqual(
      Date.parse(bDone.completedAt as string),
    );

    await h.client.signal(other, "go", {});
    await h.waitForStatus(other, "completed");
    const lanes = new KeyedLanes(h.producerRedis, h.config.redisPrefix, KEYED_SPACES.workflows, false);
    expect(await lanes.lane("account:1")).toEqual({ inFlight: [], pending: [] });
    const { rows } = await h.pool.query<{ status: string; n: string }>(
      "SELECT status, count(*)::text AS n FROM keyed_commands WHERE entity = '@workflow' GROUP BY status",
    );
    expect(rows).toEqual([{ status: "done", n: "4" }]);
  });

  it("a repeated start with the same idempotency key admits nothing new", async () => {
    const request = { workflow: gated.name, input: { account: "3", tag: "x" }, idempotencyKey: "idem-3" };
    const first = await h.client.start(request);
    const again = await h.client.start(request);
    expect(again.executionId).toBe(first.executionId);
    expect(again.created).toBe(false);
    await h.waitForView(first.executionId, onSignal, "admitted once");
    await h.client.signal(first.executionId, "go", {});
    await h.waitForStatus(first.executionId, "completed");
  });
});
