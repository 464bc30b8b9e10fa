import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { ExecutionView } from "../../src/engine/execution-client.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { PgKeyLines } from "../../src/keyed/store/pg-key-lines.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/**
 * The key lines of docs/keyed.md, "Who holds the key", on a key that lets two run at once: both
 * hold it, the longer-holding one is named, and positions count only the runs still queued.
 */

const pair = defineWorkflow({
  name: "test.keyed.pair",
  version: 1,
  input: z.object({ tag: z.string() }),
  output: z.object({ tag: z.string() }),
  key: () => "pair",
  keyLimit: 2,
  async run(ctx, input) {
    await ctx.waitForSignal("go", { schema: z.object({}) });
    return { tag: input.tag };
  },
});

let h: EngineHarness;
let lines: PgKeyLines;

beforeAll(async () => {
  h = await startEngineHarness({ file: import.meta.url, workflows: [pair] });
  lines = new PgKeyLines(h.pool, []);
});

afterAll(async () => {
  await h?.stop();
});

const onSignal = (view: ExecutionView) =>
  view.status === "waiting" && (view.waitingFor ?? []).some((w) => w.kind === "signal");

describe("key lines on a key with limit 2", () => {
  it("counts both holders, names the longer-holding one, and numbers only the queued runs", async () => {
    const start = async (tag: string) =>
      (await h.client.start({ workflow: pair.name, input: { tag } })).executionId;
    const a = await start("a");
    await h.waitForView(a, onSignal, "a holding the key");
    const b = await start("b");
    await h.waitForView(b, onSignal, "b holding the key beside a");
    const c = await start("c");
    const d = await start("d");

    expect(await lines.linesOf(a)).toEqual([]);
    const [cLine] = await lines.linesOf(c);
    expect(cLine).toMatchObject({ entity: "@workflow", key: "pair", position: 1, holders: 2 });
    expect(cLine?.holder).toMatchObject({ executionId: a, workflow: pair.name, orgId: "default" });
    expect((await lines.linesOf(d))[0]).toMatchObject({
      position: 2,
      holders: 2,
      holder: { executionId: a },
    });

    await h.client.signal(a, "go", {});
    await h.waitForStatus(a, "completed");
    await h.waitForView(c, onSignal, "c holding the key after a finished");
    expect((await lines.linesOf(d))[0]).toMatchObject({
      position: 1,
      holders: 2,
      holder: { executionId: b },
    });

    for (const id of [b, c]) await h.client.signal(id, "go", {});
    await h.waitForView(d, onSignal, "d holding the key");
    expect(await lines.linesOf(d)).toEqual([]);
    await h.client.signal(d, "go", {});
    await h.waitForStatus(d, "completed");
  });
});
