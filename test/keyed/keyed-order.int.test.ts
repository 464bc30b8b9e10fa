import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineEntity } from "../../src/keyed/entity.js";
import { hashCommand } from "../../src/keyed/request-hash.js";
import { createKeyedWorld, type KeyedWorld } from "./keyed-harness.js";

/**
 * Per-key order is the committed sequence (docs/keyed.md, "Order"): a sender that crashed between
 * its INSERT and its ENQUEUE leaves a gap in its key's lane, and a later command of the same key
 * must not overtake it. The later sender fills the gap itself; a gap with no later sender is filled
 * by the repair within its grace period (a long one here, so only the sender can fill it).
 */

const handled: string[] = [];

const ledger = defineEntity({
  name: "test.ledger",
  key: (input) => input.account,
  handlers: {
    post: {
      input: z.object({ account: z.string(), label: z.string() }),
      output: z.object({ label: z.string() }),
      async handle(_ctx, input) {
        handled.push(input.label);
        return { label: input.label };
      },
    },
  },
});

let world: KeyedWorld;

beforeAll(async () => {
  world = await createKeyedWorld(import.meta.url, { entities: [ledger] });
  await world.startWorkers({ graceMs: 3_600_000 });
});

afterAll(async () => {
  await world?.close();
});

describe("per-key order", () => {
  it("a later command of the key never overtakes one committed before it and not yet enqueued", async () => {
    // The crashed sender: its command is committed in PostgreSQL and never reached Redis.
    const orphan = { account: "acct-1", label: "first" };
    await world.pool.query(
      `INSERT INTO keyed_commands (id, entity, command, command_id, key, key_limit, request_hash, input)
       VALUES ($1, $2, 'post', 'orphan-1', $3, 1, $4, $5::jsonb)`,
      [randomUUID(), ledger.name, orphan.account, hashCommand("post", orphan), JSON.stringify(orphan)],
    );
    const reply = await world.client.send(ledger, "post", { account: "acct-1", label: "second" });
    expect(reply.label).toBe("second");
    expect(handled).toEqual(["first", "second"]);
  });
});
