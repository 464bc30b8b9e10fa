import { z } from "zod";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { defineEntity, EntityClient, EntityRegistry, startKeyedWorkers } from "../../src/keyed/index.js";
import { createLogger } from "../../src/observability/logger.js";
import { createRedisConnection } from "../../src/transport/redis-connection.js";
import { nowMs } from "../lib/concurrency.js";
import { measure, notMeasured, type SystemResult, type Workload } from "./types.js";

const COMMANDS_PER_KEY = 10;
/** Command rounds sent before awaiting their replies: keeps several commands of each key queued. */
const ROUNDS_IN_FLIGHT = 5;

/**
 * Defined when W9 runs, not at import: a declared entity that a runner does not register makes
 * that runner refuse to start, and the other workloads' runners register none.
 */
function defineCounter() {
  return defineEntity({
    name: "bench.counter",
    key: (input: { key: string }) => input.key,
    state: { schema: z.object({ n: z.number().int() }), initial: () => ({ n: 0 }) },
    handlers: {
      tick: {
        input: z.object({ key: z.string(), idx: z.number().int() }),
        output: z.object({ n: z.number().int() }),
        async handle(ctx) {
          ctx.setState({ n: ctx.state.n + 1 });
          return { n: ctx.state.n };
        },
      },
    },
  });
}

/**
 * W9: keys × 10 ordered commands through keyed serialization (one in flight per key). A command
 * whose reply (the key's counter before it ran) differs from its send index ran out of order.
 * No peer offers per-key ordering on open-source queues (BullMQ groups are a Pro feature), so
 * Tenor is measured alone.
 */
export const w9Keyed: Workload = {
  id: "W9",
  title: "keyed work",
  async run(ctx) {
    const keys = ctx.quick ? 1_000 : 10_000;
    const url = await ctx.env.freshDatabase("w9");
    const pool = ctx.env.pool(url, 16);
    const prefix = ctx.env.prefix("w9-tenor");
    const systems: Record<string, SystemResult> = {
      floor: notMeasured("the floor has no per-key ordering to compare against"),
      bullmq: notMeasured("per-key (group) concurrency is a BullMQ Pro feature"),
      dbos: notMeasured("DBOS has no keyed entity with ordered per-key commands comparable to this"),
    };
    const redis = createRedisConnection(ctx.env.redisUrl, "producer");
    try {
      systems.tenor = await measure(ctx, "tenor", async () => {
        const counter = defineCounter();
        const logger = createLogger({ level: "error" });
        const registry = new EntityRegistry([counter]);
        const keyed = await startKeyedWorkers({
          pool,
          redis,
          prefix,
          entities: registry,
          workflows: new WorkflowRegistry([]),
          starter: { enqueue: async () => {} },
          logger,
          settings: {
            leaseMs: 30_000,
            batchSize: 256,
            concurrency: 4,
            repairIntervalMs: 1_000,
            graceMs: 5_000,
          },
        });
        const client = new EntityClient({ pool, redis, prefix, registry, logger });
        let violations = 0;
        const begun = nowMs();
        try {
          for (let round = 0; round < COMMANDS_PER_KEY; round += ROUNDS_IN_FLIGHT) {
            const sends: Promise<void>[] = [];
            for (let idx = round; idx < Math.min(round + ROUNDS_IN_FLIGHT, COMMANDS_PER_KEY); idx++) {
              for (let k = 0; k < keys; k++) {
                const key = `k${k}`;
                sends.push(
                  client.send(counter, "tick", { key, idx }).then((reply) => {
                    if (reply.n !== idx) violations++;
                  }),
                );
              }
            }
            await Promise.all(sends);
          }
        } finally {
          await client.close();
          await keyed.stop();
        }
        const wallMs = nowMs() - begun;
        const commands = keys * COMMANDS_PER_KEY;
        return {
          status: "ok",
          figures: { commandsPerSec: commands / (wallMs / 1000), orderingViolations: violations },
          details: { wallMs, commands },
        };
      });
    } finally {
      redis.disconnect();
      await pool.end();
    }
    return {
      id: "W9",
      title: "keyed work",
      status: "ok",
      params: { keys, commandsPerKey: COMMANDS_PER_KEY, roundsInFlight: ROUNDS_IN_FLIGHT, limitPerKey: 1 },
      systems,
    };
  },
};
