import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { BusinessError } from "../../src/engine/errors.js";
import { defineEntity } from "../../src/keyed/entity.js";
import { KEYED_ERRORS } from "../../src/keyed/error-codes.js";
import { entityLane } from "../../src/keyed/keyed-names.js";
import type { KeyedWorkers } from "../../src/keyed/keyed-workers.js";
import { createKeyedWorld, type KeyedWorld, until } from "./keyed-harness.js";

/**
 * Keyed entities in one process: typed replies, per-key state in the command's transaction,
 * refusals, idempotency by command id (a resend, a concurrent duplicate, a redelivery after a
 * runner died holding the command), and fairness: a hot key's backlog does not delay a cold key.
 */

const ran = new Map<string, number>();
const handled: string[] = [];

const counter = defineEntity({
  name: "test.counter",
  key: (input) => input.account,
  state: { schema: z.object({ total: z.number() }), initial: () => ({ total: 0 }) },
  handlers: {
    add: {
      input: z.object({ account: z.string(), amount: z.number().int() }),
      output: z.object({ total: z.number(), seen: z.number() }),
      async handle(ctx, input) {
        ran.set(ctx.commandId, (ran.get(ctx.commandId) ?? 0) + 1);
        if (input.amount < 0) throw new BusinessError("NEGATIVE_AMOUNT", "amounts must be positive");
        const total = ctx.state.total + input.amount;
        ctx.setState({ total });
        return { total, seen: ran.get(ctx.commandId) ?? 0 };
      },
    },
  },
});

const fair = defineEntity({
  name: "test.fair",
  key: (input) => input.key,
  handlers: {
    touch: {
      input: z.object({ key: z.string(), i: z.number() }),
      output: z.object({ i: z.number() }),
      async handle(ctx, input) {
        handled.push(`${ctx.key}:${input.i}`);
        return { i: input.i };
      },
    },
  },
});

let world: KeyedWorld;
let keyed: KeyedWorkers;

beforeAll(async () => {
  world = await createKeyedWorld(import.meta.url, { entities: [counter, fair] });
  keyed = await world.startWorkers({ concurrency: 1, batchSize: 8 });
});

afterAll(async () => {
  await world?.close();
});

describe("keyed entities", () => {
  it("replies typed values and keeps per-key state in arrival order", async () => {
    const replies = await Promise.all(
      [1, 2, 3, 4, 5].map((amount) => world.client.send(counter, "add", { account: "a", amount })),
    );
    expect(replies.map((r) => r.total)).toEqual([1, 3, 6, 10, 15]);
    const other = await world.client.send(counter, "add", { account: "b", amount: 7 });
    expect(other.total).toBe(7);
  });

  it("rejects a refused command with the handler's code and leaves the state unchanged", async () => {
    await expect(world.client.send(counter, "add", { account: "c", amount: -1 })).rejects.toMatchObject({
      code: "NEGATIVE_AMOUNT",
    });
    expect((await world.client.send(counter, "add", { account: "c", amount: 2 })).total).toBe(2);
  });

  it("makes a command idempotent by its command id: resends and concurrent duplicates run it once", async () => {
    const send = () =>
      world.client.send(counter, "add", { account: "d", amount: 5 }, { commandId: "cmd-d-1" });
    const [first, second] = await Promise.all([send(), send()]);
    const third = await send();
    expect(first).toEqual({ total: 5, seen: 1 });
    expect(second).toEqual(first);
    expect(third).toEqual(first);
    expect(ran.get("cmd-d-1")).toBe(1);
    await expect(
      world.client.send(counter, "add", { account: "d", amount: 6 }, { commandId: "cmd-d-1" }),
    ).rejects.toMatchObject({ code: KEYED_ERRORS.COMMAND_ID_REUSED });
  });

  it("redelivers a command whose runner died holding it, and runs it once", async () => {
    // A "runner" that claims the command and dies holding it: its lease (1 s) runs out.
    await keyed.stop();
    const pending = world.client.send(counter, "add", { account: "e", amount: 1 }, { commandId: "cmd-e-1" });
    const claimed = await until("the command claimed by the doomed runner", async () => {
      const items = await world.entityLanes.claim(10, 1_000);
      return items.length > 0 ? items : false;
    });
    expect(claimed).toHaveLength(1);
    keyed = await world.startWorkers({ concurrency: 1, batchSize: 8 });
    const reply = await pending;
    expect(reply.total).toBe(1);
    expect(ran.get("cmd-e-1")).toBe(1);
    // Redis told again about a finished command (a runner died after commit, before release):
    // it is released and its reply republished, never run again.
    const { rows } = await world.pool.query<{ id: string; seq: string }>(
      "SELECT id, seq::text AS seq FROM keyed_commands WHERE command_id = 'cmd-e-1'",
    );
    const row = rows[0] as { id: string; seq: string };
    await world.entityLanes.enqueue([
      { id: row.id, lane: entityLane("test.counter", "e"), seq: row.seq, limit: 1 },
    ]);
    await until("the stale item released", async () => {
      const lane = await world.entityLanes.lane(entityLane("test.counter", "e"));
      return lane.inFlight.length + lane.pending.length === 0;
    });
    expect(ran.get("cmd-e-1")).toBe(1);
    expect((await world.client.send(counter, "add", { account: "e", amount: 1 })).total).toBe(2);
  });

  it("posts a command without waiting: committed at once, told when it finishes, read by posting again", async () => {
    await keyed.stop();
    const finished: unknown[] = [];
    const post = () =>
      world.client.post(
        counter,
        "add",
        { account: "p", amount: 4 },
        { commandId: "cmd-p-1", onFinished: (message) => finished.push(message) },
      );
    // No runner handles it yet: the post returns once the command is committed.
    expect(await post()).toBeNull();
    const { rows } = await world.pool.query("SELECT status FROM keyed_commands WHERE command_id = 'cmd-p-1'");
    expect(rows).toEqual([{ status: "queued" }]);
    keyed = await world.startWorkers({ concurrency: 1, batchSize: 8 });
    await until("the posted command finished and its sender told", async () => finished.length > 0);
    expect(finished).toEqual([{ status: "done", reply: { total: 4, seen: 1 } }]);
    // Posting again reads the stored reply; the command never runs twice.
    expect(await post()).toEqual({ reply: { total: 4, seen: 1 } });
    expect(ran.get("cmd-p-1")).toBe(1);
    expect(finished).toHaveLength(1);
  });

  it("is fair: a cold key's command waits behind a few of a hot key's 1,000, not all of them", async () => {
    handled.length = 0;
    const hot = Array.from({ length: 1_000 }, (_, i) => world.client.send(fair, "touch", { key: "hot", i }));
    await until("the hot backlog queued", async () => {
      const lane = await world.entityLanes.lane(entityLane("test.fair", "hot"));
      return lane.pending.length > 500 || false;
    });
    const before = handled.length;
    await world.client.send(fair, "touch", { key: "cold", i: 0 });
    const coldAt = handled.indexOf("cold:0");
    await Promise.all(hot);
    const hotAfterCold = handled.slice(coldAt + 1).filter((h) => h.startsWith("hot:")).length;
    // Hot commands handled between the cold one's arrival and its handling: a handful (one ready
    // hot command per claim), against the hundreds still queued behind them.
    expect(coldAt - before).toBeLessThanOrEqual(5);
    expect(hotAfterCold).toBeGreaterThan(400);
    expect(handled.filter((h) => h.startsWith("hot:"))).toEqual(
      Array.from({ length: 1_000 }, (_, i) => `hot:${i}`),
    );
  });
});
