import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ENGINE_ERRORS } from "../../src/engine/error-codes.js";
import { BusinessError } from "../../src/engine/errors.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";

/**
 * What PostgreSQL can store is decided once, before any row of a turn is written (docs/engine.md,
 * "What PostgreSQL can store"): a value with U+0000 or a lone surrogate becomes one typed outcome
 * the body sees, a failure record is stored escaped, and a finished step's row is written whatever
 * happens to a sibling's. The last line of defence (the store's refusal after the check passed)
 * is exercised with a real refusal by PostgreSQL: a trigger of this file's database raises 22P05
 * for rows that carry a marker, after a pause, as the server does for a value it cannot convert.
 */

let h: EngineHarness;

/** Rows carrying this text are refused by PostgreSQL itself (the trigger below), 300 ms late. */
const REFUSED_BY_SERVER = "refused-by-the-server";

const siblings = defineWorkflow({
  name: "test.storable.siblings",
  version: 1,
  input: z.object({ tag: z.string(), quote: z.enum(["nul", "server"]), payMs: z.number() }),
  output: z.object({ quote: z.string(), pay: z.string() }),
  async run(ctx, input) {
    const [quote, pay] = await Promise.allSettled([
      ctx.step("quote", async () => {
        await h.recordEffect(`${input.tag}:quote`);
        return input.quote === "nul" ? "bad\u0000quote" : REFUSED_BY_SERVER;
      }),
      ctx.step("pay", async () => {
        await h.recordEffect(`${input.tag}:pay`);
        await new Promise((resolve) => setTimeout(resolve, input.payMs));
        return "paid";
      }),
    ]);
    return {
      quote: quote.status === "rejected" ? (quote.reason as BusinessError).code : quote.value,
      pay: pay.status === "fulfilled" ? pay.value : "lost",
    };
  },
});

const outputs = defineWorkflow({
  name: "test.storable.output",
  version: 1,
  input: z.object({ tag: z.string(), via: z.enum(["check", "server"]) }),
  output: z.object({ name: z.string() }),
  async run(ctx, input) {
    const hex = await ctx.step("read name", async () => {
      await h.recordEffect(`${input.tag}:read`);
      return input.via === "check" ? "41424300000000" : Buffer.from(REFUSED_BY_SERVER).toString("hex");
    });
    // Decoded by the body: a fixed-width on-chain name with trailing NULs passes the output schema.
    return { name: Buffer.from(hex, "hex").toString("latin1") };
  },
});

const failures = defineWorkflow({
  name: "test.storable.failure",
  version: 1,
  input: z.object({ tag: z.string() }),
  output: z.object({}),
  async run(ctx, input) {
    await ctx.step("check", () => h.recordEffect(`${input.tag}:check`));
    throw new BusinessError("HOLDER_UNKNOWN", "holder ABC\u0000\u0000 is unknown", {
      holder: "ABC\u0000",
      note: "\udc00",
    });
  },
});

const handedValues = defineWorkflow({
  name: "test.storable.handed",
  version: 1,
  input: z.object({ what: z.enum(["progress", "child", "approval", "name"]) }),
  output: z.object({ code: z.string(), path: z.string(), after: z.string() }),
  async run(ctx, input) {
    let code = "none";
    let path = "";
    try {
      if (input.what === "progress") ctx.progress({ stage: "bad\u0000stage" });
      if (input.what === "child") await ctx.child(failures, { tag: "bad\u0000tag" });
      if (input.what === "approval") await ctx.waitForApproval("release", { params: { memo: "\ud800" } });
      if (input.what === "name") await ctx.step("bad\u0000name", () => 1);
    } catch (error) {
      code = (error as BusinessError).code;
      path = String((error as BusinessError).details.path ?? "");
    }
    // The refused call took no position: the next call takes position 0 on every replay.
    const after = await ctx.step("after", () => "ok");
    return { code, path, after };
  },
});

beforeAll(async () => {
  h = await startEngineHarness({
    file: import.meta.url,
    workflows: [siblings, outputs, failures, handedValues],
  });
  await h.db.pool.query(`
    CREATE FUNCTION refuse_marked() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW::text LIKE '%${REFUSED_BY_SERVER}%' THEN
        PERFORM pg_sleep(0.3);
        RAISE EXCEPTION 'unsupported Unicode escape sequence' USING ERRCODE = '22P05';
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER refuse_marked_rows BEFORE INSERT OR UPDATE ON journal_entries
      FOR EACH ROW EXECUTE FUNCTION refuse_marked();
    CREATE TRIGGER refuse_marked_outputs BEFORE UPDATE ON executions
      FOR EACH ROW WHEN (NEW.output IS NOT NULL) EXECUTE FUNCTION refuse_marked();`);
});

afterAll(async () => {
  await h?.stop();
});

async function journalOf(id: string) {
  const { rows } = await h.db.pool.query<{
    position: number;
    name: string;
    state: string;
    turn: number;
    code: string | null;
  }>(
    "SELECT position, name, state, turn, error->>'code' AS code FROM journal_entries WHERE execution_id = $1 ORDER BY position",
    [id],
  );
  return rows;
}

describe("a sibling's refused row", () => {
  it("an unstorable step result fails that step once, typed, and its sibling's work runs once", async () => {
    const { executionId } = await h.client.start({
      workflow: siblings.name,
      input: { tag: "nul", quote: "nul", payMs: 400 },
    });
    const done = await h.waitForStatus(executionId, "completed");
    expect(done.output).toEqual({ quote: ENGINE_ERRORS.RESULT_NOT_STORABLE, pay: "paid" });
    expect(await h.effectCount("nul:quote")).toBe(1);
    expect(await h.effectCount("nul:pay")).toBe(1);
    const journal = await journalOf(executionId);
    expect(journal.map((e) => [e.name, e.state, e.code])).toEqual([
      ["quote", "error", ENGINE_ERRORS.RESULT_NOT_STORABLE],
      ["pay", "ok", null],
    ]);
    // Decided before the write: both rows come from the first turn, no replay was needed.
    expect(new Set(journal.map((e) => e.turn)).size).toBe(1);
    const { rows } = await h.db.pool.query(
      "SELECT error FROM journal_entries WHERE execution_id = $1 AND position = 0",
      [executionId],
    );
    expect(rows[0].error.details).toMatchObject({ step: "quote", path: "$", rule: "nul-character" });
  });

  // pay finishes after the refusal (400 ms), or while quote's refused write is still in flight (150 ms).
  for (const payMs of [400, 150]) {
    it(`a row PostgreSQL itself refuses after the body had it leaves the finished sibling's row written (pay ${payMs} ms)`, async () => {
      const tag = `server-${payMs}`;
      const { executionId } = await h.client.start({
        workflow: siblings.name,
        input: { tag, quote: "server", payMs },
      });
      const done = await h.waitForStatus(executionId, "completed");
      // The body saw quote's value ahead of its row; the refusal replaced it, so a new turn replayed.
      expect(done.output).toEqual({ quote: ENGINE_ERRORS.RESULT_NOT_STORABLE, pay: "paid" });
      expect(await h.effectCount(`${tag}:quote`)).toBe(1);
      expect(await h.effectCount(`${tag}:pay`)).toBe(1);
      const journal = await journalOf(executionId);
      expect(journal.map((e) => [e.name, e.state])).toEqual([
        ["quote", "error"],
        ["pay", "ok"],
      ]);
    });
  }
});

describe("an output PostgreSQL cannot store", () => {
  it("ends the execution failed once with OUTPUT_NOT_STORABLE naming the path", async () => {
    const { executionId } = await h.client.start({
      workflow: outputs.name,
      input: { tag: "out", via: "check" },
    });
    const failed = await h.waitForStatus(executionId, "failed");
    expect(failed.failure?.code).toBe(ENGINE_ERRORS.OUTPUT_NOT_STORABLE);
    expect(failed.failure?.details).toMatchObject({ path: "$.name", rule: "nul-character" });
    expect(failed.failure?.message).toContain("$.name");
    const { rows } = await h.db.pool.query<{ turn: number }>("SELECT turn FROM executions WHERE id = $1", [
      executionId,
    ]);
    expect(rows[0]?.turn).toBe(1);
    expect(await h.effectCount("out:read")).toBe(1);
  });

  it("fails the same way when the server refuses an output that passed the check", async () => {
    const { executionId } = await h.client.start({
      workflow: outputs.name,
      input: { tag: "out2", via: "server" },
    });
    const failed = await h.waitForStatus(executionId, "failed");
    expect(failed.failure?.code).toBe(ENGINE_ERRORS.OUTPUT_NOT_STORABLE);
    expect(failed.failure?.details).toMatchObject({ sqlstate: "22P05" });
    expect(await h.effectCount("out2:read")).toBe(1);
  });
});

describe("a failure record with text PostgreSQL cannot store", () => {
  it("is recorded once, escaped, and says which parts were escaped", async () => {
    const { executionId } = await h.client.start({ workflow: failures.name, input: { tag: "fail" } });
    const failed = await h.waitForStatus(executionId, "failed");
    expect(failed.failure?.code).toBe("HOLDER_UNKNOWN");
    expect(failed.failure?.message).toBe("holder ABC\\u0000\\u0000 is unknown");
    expect(failed.failure?.details).toEqual({ holder: "ABC\\u0000", note: "\\udc00" });
    expect(failed.failure?.escaped).toEqual(["message", "details.holder", "details.note"]);
    const { rows } = await h.db.pool.query<{ turn: number }>("SELECT turn FROM executions WHERE id = $1", [
      executionId,
    ]);
    expect(rows[0]?.turn).toBe(1);
  });
});

describe("values the body hands to the engine", () => {
  for (const [what, path] of [
    ["progress", "$.stage"],
    ["child", "$.tag"],
    ["approval", "$.memo"],
    ["name", "$"],
  ] as const) {
    it(`${what}: refused with VALUE_NOT_STORABLE before it takes a position`, async () => {
      const { executionId } = await h.client.start({ workflow: handedValues.name, input: { what } });
      const done = await h.waitForStatus(executionId, "completed");
      expect(done.output).toEqual({ code: ENGINE_ERRORS.VALUE_NOT_STORABLE, path, after: "ok" });
      const journal = await journalOf(executionId);
      expect(journal.map((e) => [e.position, e.name])).toEqual([[0, "after"]]);
    });
  }
});

describe("inputs and signals through the client", () => {
  it("refuses an unstorable input with INPUT_INVALID naming the field, and stores nothing", async () => {
    await expect(
      h.client.start({ workflow: failures.name, input: { tag: "a\u0000b" } }),
    ).rejects.toMatchObject({ code: ENGINE_ERRORS.INPUT_INVALID, details: { issues: [{ path: "tag" }] } });
    const { rows } = await h.db.pool.query(
      "SELECT count(*)::int AS n FROM executions WHERE input->>'tag' LIKE 'a%b'",
    );
    expect(rows[0].n).toBe(0);
  });
});
