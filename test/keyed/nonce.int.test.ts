import fc from "fast-check";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nonceEntity } from "../../src/chain/nonce-entity.js";
import { reserveNonce } from "../../src/chain/store/pg-nonce-reservations.js";
import { createPgPool } from "../../src/store/pg-pool.js";
import { createKeyedWorld, type KeyedWorld } from "./keyed-harness.js";

/**
 * Nonce reservation per (chain, sender) (docs/keyed.md, "Guarantees and their fences"): serialized
 * as a keyed entity, and unique in PostgreSQL, so that calling the reservation concurrently with
 * the serialization bypassed still never hands one nonce out twice.
 */

const SENDER = "0x00000000000000000000000000000000000000AA";

let world: KeyedWorld;
let pools: pg.Pool[];
let runs = 0;

beforeAll(async () => {
  world = await createKeyedWorld(import.meta.url, { entities: [nonceEntity] });
  await world.startWorkers();
  pools = Array.from({ length: 3 }, (_, i) =>
    createPgPool(world.db.url, { applicationName: `nonce-test-${i}`, max: 8 }),
  );
});

afterAll(async () => {
  await Promise.all((pools ?? []).map((p) => p.end()));
  await world?.close();
});

describe("nonce reservation", () => {
  it("hands out 0..n-1 in arrival order through the entity, and a resend gets its first nonce", async () => {
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        world.client.send(nonceEntity, "reserve", { chainId: 1, sender: SENDER }, { commandId: `tx-${i}` }),
      ),
    );
    expect(replies.map((r) => r.nonce)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    const again = await world.client.send(
      nonceEntity,
      "reserve",
      { chainId: 1, sender: SENDER },
      { commandId: "tx-7" },
    );
    expect(again.nonce).toBe(7);
    // The same id for another request is refused, never answered with someone else's nonce.
    await expect(
      world.client.send(
        nonceEntity,
        "reserve",
        { chainId: 1, sender: SENDER, floor: 3 },
        { commandId: "tx-7" },
      ),
    ).rejects.toMatchObject({ code: "COMMAND_ID_REUSED" });
    const floor = await world.client.send(nonceEntity, "reserve", { chainId: 2, sender: SENDER, floor: 40 });
    expect(floor.nonce).toBe(40);
  });

  it("grants one sender's queued reservations in batches, one transaction for many", async () => {
    const sender = "0x00000000000000000000000000000000000000BB";
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        world.client.send(nonceEntity, "reserve", { chainId: 3, sender }, { commandId: `batch-${i}` }),
      ),
    );
    expect(replies).toEqual(Array.from({ length: 40 }, (_, i) => ({ nonce: i })));
    // A command's completed_at is its transaction's time: one value per entity turn that granted.
    const { rows } = await world.pool.query<{ turns: number }>(
      "SELECT count(DISTINCT completed_at)::int AS turns FROM keyed_commands WHERE command_id LIKE 'batch-%'",
    );
    expect(rows[0]?.turns).toBeLessThan(10);
  });

  it("refuses a reservation while the sender's window is full, and a repeated one keeps its nonce", async () => {
    const sender = "0x00000000000000000000000000000000000000CC";
    const ask = (i: number, mined: number, reservationId?: string) =>
      world.client.send(
        nonceEntity,
        "reserve",
        { chainId: 4, sender, window: { mined, maxPending: 3 }, ...(reservationId ? { reservationId } : {}) },
        { commandId: `window-${i}-${mined}` },
      );
    const first = await Promise.all([0, 1, 2, 3, 4].map((i) => ask(i, 0)));
    expect(first.slice(0, 3)).toEqual([{ nonce: 0 }, { nonce: 1 }, { nonce: 2 }]);
    expect(first.slice(3)).toEqual([{ full: { pending: 3, bound: 3 } }, { full: { pending: 3, bound: 3 } }]);
    // Two mined: two places. A new command for reservation window-3 takes one and keeps it.
    expect(await ask(5, 2, "window-3-0")).toEqual({ nonce: 3 });
    expect(await ask(6, 2, "window-3-0")).toEqual({ nonce: 3 });
    expect(await ask(7, 2)).toEqual({ nonce: 4 });
    expect(await ask(8, 2)).toEqual({ full: { pending: 3, bound: 3 } });
    // A reservation already made answers with its nonce even when the window is full now.
    expect(await ask(9, 2, "window-0-0")).toEqual({ nonce: 0 });
    const { rows } = await world.pool.query<{ nonce: string }>(
      "SELECT nonce::text FROM nonce_reservations WHERE chain_id = 4 ORDER BY nonce",
    );
    expect(rows.map((r) => Number(r.nonce))).toEqual([0, 1, 2, 3, 4]);
  });

  it("never duplicates a nonce when reservations bypass the serialization and race directly", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 10, max: 60 }),
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: 1, max: 1_000 }),
        async (count, repeats, salt) => {
          // A chain of its own per run (fast-check may repeat values across runs).
          const chainId = ++runs * 10_000 + salt;
          const sender = `0x${chainId.toString(16).padStart(40, "0")}`;
          // Some command ids are asked twice, concurrently: each still gets exactly one nonce.
          const ids = Array.from({ length: count }, (_, i) => `direct-${chainId}-${i}`);
          const asks = [...ids, ...ids.slice(0, repeats)];
          const nonces = await Promise.all(
            asks.map((commandId, i) =>
              reserveNonce(pools[i % pools.length] as pg.Pool, {
                chainId: 100 + chainId,
                sender,
                commandId,
              }),
            ),
          );
          const byId = new Map<string, number>();
          asks.forEach((id, i) => {
            const previous = byId.get(id);
            if (previous !== undefined) expect(nonces[i]).toBe(previous);
            byId.set(id, nonces[i] as number);
          });
          expect([...byId.values()].sort((a, b) => a - b)).toEqual(
            Array.from({ length: count }, (_, i) => i),
          );
          const { rows } = await world.pool.query<{ n: string; distinct: string }>(
            "SELECT count(*)::text AS n, count(DISTINCT nonce)::text AS distinct FROM nonce_reservations WHERE chain_id = $1",
            [100 + chainId],
          );
          expect(rows[0]).toEqual({ n: String(count), distinct: String(count) });
        },
      ),
      { numRuns: 15 },
    );
  });
});
