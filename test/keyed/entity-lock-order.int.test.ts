import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineEntity } from "../../src/keyed/entity.js";
import { runEntityBatch } from "../../src/keyed/entity-batch.js";
import type { ClaimedItem } from "../../src/keyed/keyed-lanes.js";
import { createKeyedWorld, type KeyedWorld } from "./keyed-harness.js";

/**
 * Two entity batches that share keys take the keys' locks in one order. A batch is one PostgreSQL
 * transaction and a handler may lock its key for the rest of it (the nonce entity locks its
 * sender): batches that met the same two keys in opposite orders held one lock each and waited
 * for the other's. PostgreSQL broke that deadlock by failing one handler's statement, the batch
 * rolled back only that handler's savepoint and went on holding its other locks, so every next
 * handler of it deadlocked again, one second each (W17 stalled for minutes this way), and each
 * counted a failed attempt against a command that had done nothing wrong.
 */

const LOCK = 746_099;

const locker = defineEntity({
  name: "test.locker",
  key: (input) => input.key,
  handlers: {
    touch: {
      // `also`: a second key this command locks after its own, as a handler that writes another
      // key's rows would; no order of keys can keep two such batches apart.
      input: z.object({ key: z.string(), also: z.string().optional() }),
      output: z.object({ key: z.string() }),
      async handle(ctx, input) {
        await ctx.query("SELECT pg_advisory_xact_lock($1::int, hashtext($2::text))", [LOCK, ctx.key]);
        // Long enough for the other batch to take its first lock before this one takes its second.
        await ctx.query("SELECT pg_sleep(0.3)");
        if (input.also)
          await ctx.query("SELECT pg_advisory_xact_lock($1::int, hashtext($2::text))", [LOCK, input.also]);
        return { key: input.key };
      },
    },
  },
});

let world: KeyedWorld;

beforeAll(async () => {
  world = await createKeyedWorld(import.meta.url, { entities: [locker] });
});

afterAll(async () => {
  await world?.close();
});

/** Posts one command per key, in this order (their seq order), and returns them as claimed items. */
async function post(label: string, keys: readonly string[], also?: string): Promise<ClaimedItem[]> {
  const items: ClaimedItem[] = [];
  for (const key of keys) {
    const commandId = `${label}:${key}`;
    await world.client.post(locker, "touch", { key, ...(also ? { also } : {}) }, { commandId, watchMs: 1 });
    const { rows } = await world.pool.query<{ id: string }>(
      "SELECT id FROM keyed_commands WHERE command_id = $1",
      [commandId],
    );
    items.push({ id: rows[0]?.id as string, lane: key, channel: "" });
  }
  return items;
}

describe("entity batches that share keys", () => {
  it("finish both without a deadlock and without counting an attempt, whatever order their commands came in", async () => {
    const first = await post("first", ["a", "b"]);
    const second = await post("second", ["b", "a"]);
    const results = await Promise.all([
      runEntityBatch(world.pool, world.registry, first),
      runEntityBatch(world.pool, world.registry, second),
    ]);
    for (const result of results) {
      expect(result.retried).toEqual([]);
      expect(result.finished.map((f) => f.status)).toEqual(["done", "done"]);
    }
    const rows = await commands("first:%", "second:%");
    expect(rows).toHaveLength(4);
    expect(rows.every((r) => r.status === "done" && r.attempts === 0)).toBe(true);
  });

  it("abort whole on a deadlock PostgreSQL breaks, so the other commits, and neither counts an attempt", async () => {
    const [x] = await post("cross-x", ["x"], "y");
    const [y] = await post("cross-y", ["y"], "x");
    const settled = await Promise.allSettled([
      runEntityBatch(world.pool, world.registry, [x as ClaimedItem]),
      runEntityBatch(world.pool, world.registry, [y as ClaimedItem]),
    ]);
    const lost = settled.findIndex((s) => s.status === "rejected");
    const won = settled.find((s) => s.status === "fulfilled");
    expect(lost, "PostgreSQL failed one of them with a deadlock").toBeGreaterThanOrEqual(0);
    expect((settled[lost] as PromiseRejectedResult).reason).toMatchObject({ code: "40P01" });
    expect(won?.value.finished.map((f) => f.status)).toEqual(["done"]);
    // The loser's command is untouched: queued, no attempt counted. Run again, it is done.
    expect((await commands("cross-%")).map((r) => [r.status, r.attempts]).sort()).toEqual([
      ["done", 0],
      ["queued", 0],
    ]);
    const again = await runEntityBatch(world.pool, world.registry, [(lost === 0 ? x : y) as ClaimedItem]);
    expect(again.finished.map((f) => f.status)).toEqual(["done"]);
  });
});

async function commands(...patterns: string[]) {
  const { rows } = await world.pool.query<{ status: string; attempts: number }>(
    "SELECT status, attempts FROM keyed_commands WHERE entity = 'test.locker' AND command_id LIKE ANY($1::text[])",
    [patterns],
  );
  return rows;
}
