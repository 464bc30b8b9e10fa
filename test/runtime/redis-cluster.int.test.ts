import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../src/config/load-config.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { createLogger } from "../../src/observability/logger.js";
import { type RunnerLiveness, startRunnerLiveness } from "../../src/ownership/runner-liveness.js";
import { createExecutionClient } from "../../src/roles/create-execution-client.js";
import { connectDependencies, type Dependencies } from "../../src/roles/dependencies.js";
import { type RunnerEngine, startRunnerEngine } from "../../src/roles/runner-engine.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { waitUntil } from "../support/processes.js";
import { type RedisClusterHandle, startRedisCluster } from "../support/redis-cluster.js";

/**
 * Tenor unchanged on a local 3-node Redis Cluster: a hash-tagged prefix puts every key of the
 * deployment in one slot, so BullMQ's scripts (flows across the executions and activity queues),
 * the keyed lanes' scripts and Tenor's own (parent release, dead-runner reclaim) all run there.
 * One keyed workflow takes a step, a timer, a signal and a child; a second of the same key waits
 * in its lane until the first finished; the client learns of the finish through pub/sub.
 */

const clusterChild = defineWorkflow({
  name: "cluster.child",
  version: 1,
  input: z.object({ n: z.number().int() }),
  output: z.object({ doubled: z.number().int() }),
  async run(ctx, input) {
    return { doubled: await ctx.step("double", () => input.n * 2) };
  },
});

const clusterParent = defineWorkflow({
  name: "cluster.parent",
  version: 1,
  input: z.object({ account: z.string(), n: z.number().int() }),
  output: z.object({ doubled: z.number().int(), signalled: z.string(), finishedAt: z.number() }),
  signals: { go: z.object({ word: z.string() }) },
  key: (input) => input.account,
  async run(ctx, input) {
    const n = await ctx.step("read", () => input.n);
    await ctx.sleep("nap", 200);
    const go = await ctx.waitForSignal("go", { schema: z.object({ word: z.string() }), timeout: "10m" });
    const { doubled } = await ctx.child(clusterChild, { n });
    const finishedAt = await ctx.step("finished-at", () => Date.now());
    return { doubled, signalled: go.timedOut ? "timeout" : go.payload.word, finishedAt };
  },
});

let cluster: RedisClusterHandle;
let db: TestDatabase;
let deps: Dependencies;
let engine: RunnerEngine;
let liveness: RunnerLiveness;
let client: ReturnType<typeof createExecutionClient>;

beforeAll(async () => {
  cluster = await startRedisCluster();
  db = await createTestDatabase();
  const config = loadConfig({
    env: {
      DATABASE_URL: db.url,
      REDIS_URL: cluster.url,
      TENOR_REDIS_PREFIX: `{tenor-${randomUUID().slice(0, 8)}}`,
      TENOR_REDIS_CLUSTER: "true",
    },
  });
  const logger = createLogger({ level: "error" });
  const registry = new WorkflowRegistry([clusterParent, clusterChild]);
  deps = await connectDependencies(config, "runner");
  engine = await startRunnerEngine({
    config,
    registry,
    logger,
    pool: deps.pool,
    workerRedis: deps.workerRedis,
    producerRedis: deps.redis,
  });
  liveness = await startRunnerLiveness({ config, redis: deps.redis, workers: engine.workers, logger });
  client = createExecutionClient({
    pool: deps.pool,
    redis: deps.redis,
    prefix: config.redisPrefix,
    registry,
    logger,
  });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await engine?.stop();
  await liveness?.stop();
  await deps?.close();
  await db?.drop();
  await cluster?.stop();
});

describe("on a Redis Cluster", () => {
  it("runs a keyed workflow with a step, a timer, a signal and a child; the key's next waits its turn", async () => {
    const first = await client.client.start({
      workflow: "cluster.parent",
      input: { account: "acct", n: 21 },
    });
    const second = await client.client.start({
      workflow: "cluster.parent",
      input: { account: "acct", n: 4 },
    });
    await waitUntil("the first waiting on its signal", async () => {
      const view = await client.client.view(first.executionId);
      return view.status === "waiting" && (view.waitingFor ?? []).some((w) => w.kind === "signal");
    });
    // Same key: the second is held in its lane while the first runs.
    const held = await client.client.view(second.executionId);
    expect(held.waitingFor?.map((w) => w.kind)).toEqual(["key"]);

    await client.client.signal(first.executionId, "go", { word: "first" });
    const done = await client.client.waitForTerminal(first.executionId, 30_000);
    expect(done.status).toBe("completed");
    expect(done.output).toMatchObject({ doubled: 42, signalled: "first" });

    await waitUntil("the second waiting on its signal", async () => {
      const view = await client.client.view(second.executionId);
      return view.status === "waiting" && (view.waitingFor ?? []).some((w) => w.kind === "signal");
    });
    await client.client.signal(second.executionId, "go", { word: "second" });
    const next = await client.client.waitForTerminal(second.executionId, 30_000);
    expect(next.status).toBe("completed");
    expect(next.output).toMatchObject({ doubled: 8, signalled: "second" });
    // The lane kept the key's order: the second finished after the first.
    expect((next.output as { finishedAt: number }).finishedAt).toBeGreaterThan(
      (done.output as { finishedAt: number }).finishedAt,
    );
  });
});
