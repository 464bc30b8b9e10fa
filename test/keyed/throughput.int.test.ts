import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineEntity } from "../../src/keyed/entity.js";
import { createKeyedWorld, type KeyedWorld } from "./keyed-harness.js";

/**
 * A rough in-test measurement of keyed throughput (the benchmark proper belongs to `npm run
 * bench`): commands across 10,000 keys through one client and one in-process runner, with the
 * ordering of every key checked. The rate is printed, not asserted: these machines are shared.
 */

const KEYS = 10_000;
const PER_KEY = 2;

const tick = defineEntity({
  name: "test.bench.tick",
  key: (input) => input.key,
  state: { schema: z.object({ n: z.number() }), initial: () => ({ n: 0 }) },
  handlers: {
    tick: {
      input: z.object({ key: z.string(), idx: z.number() }),
      output: z.object({ n: z.number() }),
      async handle(ctx) {
        ctx.setState({ n: ctx.state.n + 1 });
        return { n: ctx.state.n };
      },
    },
  },
});

let world: KeyedWorld;

beforeAll(async () => {
  world = await createKeyedWorld(import.meta.url, { entities: [tick], poolSize: 16 });
  await world.startWorkers({ concurrency: 4, batchSize: 256, leaseMs: 30_000 });
});

afterAll(async () => {
  await world?.close();
});

describe("keyed throughput", () => {
  it(`${KEYS * PER_KEY} commands across ${KEYS} keys, zero ordering violations`, async () => {
    const started = performance.now();
    const replies: Promise<boolean>[] = [];
    for (let idx = 0; idx < PER_KEY; idx++) {
      for (let k = 0; k < KEYS; k++) {
        replies.push(
          world.client
            .send(tick, "tick", { key: `k${k}`, idx }, { timeoutMs: 120_000 })
            .then((reply) => reply.n === idx),
        );
      }
    }
    const ordered = await Promise.all(replies);
    const seconds = (performance.now() - started) / 1000;
    const violations = ordered.filter((ok) => !ok).length;
    console.log(
      `keyed throughput: ${replies.length} commands across ${KEYS} keys in ${seconds.toFixed(2)} s = ${Math.round(replies.length / seconds)} commands/s; ordering violations: ${violations}`,
    );
    expect(violations).toBe(0);
  }, 180_000);
});
