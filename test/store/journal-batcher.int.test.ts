import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ENGINE_ERRORS } from "../../src/engine/error-codes.js";
import type { Fence, JournalEntry } from "../../src/engine/execution-store.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { JournalBatcher } from "../../src/store/journal-batcher.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/**
 * Group commit keeps a failure with its row (docs/engine.md, "The journal's hot path"): PostgreSQL
 * refuses a whole multi-row INSERT for one bad row (`\u0000` in text, SQLSTATE 22P05), so the batch
 * is split until the bad row stands alone; that row's position records RESULT_NOT_STORABLE (a data
 * error is not transient) and every other row of the batch is written once.
 */

let h: EngineHarness;

const poisonable = defineWorkflow({
  name: "test.batcher.poisonable",
  version: 1,
  input: z.object({ tag: z.string(), poison: z.boolean() }),
  output: z.object({ value: z.string() }),
  async run(ctx, input) {
    const value = await ctx.step("quote", async () => {
      await h.recordEffect(`${input.tag}:quote`);
      return input.poison ? "bad\u0000value" : "fine";
    });
    return { value };
  },
});

beforeAll(async () => {
  h = await startEngineHarness({ file: import.meta.url, workflows: [poisonable] });
});

afterAll(async () => {
  await h?.stop();
});

/** A fresh execution and the fence of its first turn, created in PostgreSQL only (no job). */
async function freshFence(): Promise<Fence> {
  const id = randomUUID();
  await h.store.createExecution({
    id,
    workflow: poisonable.name,
    workflowVersion: 1,
    orgId: "default",
    input: { tag: id, poison: false },
    key: null,
    idempotencyKey: null,
    requestHash: null,
    parentId: null,
    parentPosition: null,
  });
  const start = await h.store.beginTurn(id);
  if (!start) throw new Error("no turn");
  return start.fence;
}

function stepEntry(result: unknown): JournalEntry {
  return {
    position: 0,
    kind: "step",
    name: "quote",
    state: "ok",
    result,
    error: null,
    attempts: 1,
    seq: 1,
    cause: 0,
  };
}

describe("a poisoned row in a group commit", () => {
  it("fails only its own append, with RESULT_NOT_STORABLE naming the step", async () => {
    const batcher = new JournalBatcher(h.pool);
    const fences = await Promise.all(Array.from({ length: 12 }, () => freshFence()));
    const poisoned = 5;
    // Same tick: one multi-row statement carries all twelve.
    const outcomes = await Promise.allSettled(
      fences.map((fence, i) => batcher.append(fence, stepEntry(i === poisoned ? "a\u0000b" : `ok-${i}`))),
    );
    for (const [i, outcome] of outcomes.entries()) {
      if (i === poisoned) {
        expect(outcome.status).toBe("rejected");
        const error = (outcome as PromiseRejectedResult).reason as { code: string; message: string };
        expect(error.code).toBe(ENGINE_ERRORS.RESULT_NOT_STORABLE);
        expect(error.message).toContain('"quote"');
      } else {
        expect(outcome).toEqual({ status: "fulfilled", value: true });
      }
    }
    const { rows } = await h.pool.query<{
      execution_id: string;
      state: string;
      error: { code: string } | null;
    }>(
      "SELECT execution_id, state::text AS state, error FROM journal_entries WHERE execution_id = ANY($1::uuid[])",
      [fences.map((f) => f.executionId)],
    );
    expect(rows).toHaveLength(12);
    const poisonedRow = rows.find((r) => r.execution_id === fences[poisoned]?.executionId);
    // The position is journaled as the failure, so a replay meets the same error, not a re-run.
    expect(poisonedRow).toMatchObject({ state: "error", error: { code: ENGINE_ERRORS.RESULT_NOT_STORABLE } });
    expect(rows.filter((r) => r.state === "ok")).toHaveLength(11);
  });

  it("fails the step once and leaves the executions beside it alone", async () => {
    const tags = Array.from({ length: 20 }, (_, i) => `busy-${i}`);
    const started = await Promise.all(
      tags.map((tag, i) => h.client.start({ workflow: poisonable.name, input: { tag, poison: i === 7 } })),
    );
    for (const [i, { executionId }] of started.entries()) {
      if (i === 7) {
        const failed = await h.waitForStatus(executionId, "failed");
        expect(failed.failure?.code).toBe(ENGINE_ERRORS.RESULT_NOT_STORABLE);
        expect(failed.failure?.message).toContain('"quote"');
      } else {
        await h.waitForStatus(executionId, "completed");
      }
    }
    for (const tag of tags) expect(await h.effectCount(`${tag}:quote`)).toBe(1);
  });
});
