import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { ShardOwner } from "../../src/ownership/shard-owner.js";
import { PgReplicaDirectory } from "../../src/ownership/store/pg-replica-directory.js";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.js";
import { eventually } from "../support/role-process.js";

/**
 * A runner's heartbeat reports its turns in progress out of its concurrency, and the workflows it
 * serves: a step held open keeps a turn busy, and the directory shows it until the step returns.
 */
let h: EngineHarness;
let owner: ShardOwner;
let release: () => void = () => undefined;
const gate = () => new Promise<void>((resolve) => (release = resolve));
let held: Promise<void> = gate();

const holding = defineWorkflow({
  name: "test.report.holding",
  version: 3,
  input: z.object({ n: z.number() }),
  output: z.object({ n: z.number() }),
  async run(ctx, input) {
    await ctx.step("held", async () => {
      await held;
    });
    return input;
  },
});

beforeAll(async () => {
  h = await startEngineHarness({
    file: import.meta.url,
    workflows: [holding],
    durable: { runnerConcurrency: 5 },
  });
  owner = new ShardOwner({
    connectionString: h.config.databaseUrl,
    pool: h.pool,
    domain: "runner",
    shardCount: 4,
    refreshIntervalMs: 200,
    livenessWindowMs: 1_000,
    logger: h.logger,
    report: () => h.runner().report(),
  });
  await owner.start();
}, 60_000);

afterAll(async () => {
  release();
  await owner?.stop();
  await h?.stop();
});

describe("a runner's report", () => {
  it("counts the turns in progress and names the workflows it serves", async () => {
    const directory = new PgReplicaDirectory(h.db.pool, 1_000);
    const mine = async () => (await directory.list()).find((r) => r.id === owner.replicaId);
    expect(await mine()).toMatchObject({
      busy: 0,
      capacity: 5,
      workflows: ["test.report.holding@3"],
      live: true,
    });

    const started = await Promise.all(
      [1, 2, 3].map((n) => h.client.start({ workflow: "test.report.holding", input: { n } })),
    );
    await eventually("three turns held in their step", async () => (await mine())?.busy === 3);
    expect(h.runner().report().busy).toBe(3);

    release();
    held = Promise.resolve();
    for (const { executionId } of started) await h.waitForStatus(executionId, "completed");
    await eventually("no turn in progress", async () => (await mine())?.busy === 0);
  }, 60_000);
});
