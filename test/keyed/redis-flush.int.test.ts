import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineEntity } from "../../src/keyed/entity.js";
import { type OwnRedis, startOwnRedis } from "../runtime/own-redis.js";
import { killAllProcesses } from "../support/processes.js";
import { createKeyedWorld, type KeyedWorld, until } from "./keyed-harness.js";

/**
 * Redis loses everything (FLUSHALL on a redis-server of this test's own) while commands of many
 * keys are queued and running. The repair rebuilds the lanes from PostgreSQL in arrival order:
 * every command completes exactly once, in order per key, and every caller gets its reply.
 */

const sequence = defineEntity({
  name: "test.flush.sequence",
  key: (input) => input.key,
  state: { schema: z.object({ n: z.number() }), initial: () => ({ n: 0 }) },
  handlers: {
    next: {
      input: z.object({ key: z.string(), idx: z.number() }),
      output: z.object({ n: z.number() }),
      async handle(ctx) {
        await new Promise((resolve) => setTimeout(resolve, 3));
        ctx.setState({ n: ctx.state.n + 1 });
        return { n: ctx.state.n };
      },
    },
  },
});

let redis: OwnRedis;
let world: KeyedWorld;

beforeAll(async () => {
  redis = await startOwnRedis({ appendOnly: false });
  world = await createKeyedWorld(import.meta.url, { entities: [sequence], redisUrl: redis.url, pollMs: 300 });
  await world.startWorkers({ concurrency: 2, batchSize: 8 });
});

afterAll(async () => {
  await world?.close();
  await killAllProcesses();
  await redis?.stop();
});

describe("Redis flushed with keyed commands queued and in flight", () => {
  it("rebuilds every lane from PostgreSQL: all complete once, in order per key", async () => {
    const keys = Array.from({ length: 20 }, (_, k) => `key-${k}`);
    const replies = keys.flatMap((key) =>
      Array.from({ length: 15 }, (_, idx) =>
        world.client
          .send(sequence, "next", { key, idx }, { timeoutMs: 60_000 })
          .then((r) => ({ key, idx, n: r.n })),
      ),
    );
    await until("some commands done", async () => {
      const { rows } = await world.pool.query<{ n: string }>(
        "SELECT count(*)::text AS n FROM keyed_commands WHERE status = 'done'",
      );
      return Number(rows[0]?.n) >= 60;
    });
    expect(await world.redis.flushall()).toBe("OK");
    const done = await Promise.all(replies);
    // Exactly once and in arrival order: the i-th command of a key saw i earlier ones.
    for (const reply of done) expect(reply.n, `${reply.key}#${reply.idx}`).toBe(reply.idx);
    const { rows } = await world.pool.query<{ key: string; version: string }>(
      "SELECT key, version::text AS version FROM keyed_entity_states ORDER BY key",
    );
    expect(rows.every((r) => r.version === "15")).toBe(true);
    expect(rows).toHaveLength(20);
    expect(await world.entityLanes.isWhole()).toBe(true);
  });
});
