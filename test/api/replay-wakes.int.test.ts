import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { createLogger } from "../../src/observability/logger.js";
import { createExecutionClient } from "../../src/roles/create-execution-client.js";
import { PgApprovals } from "../../src/store/pg-approvals.js";
import { API_TEST_WORKFLOWS } from "./fixtures/api-workflows.js";
import { type ApiHarness, startApiHarness } from "./support/api-harness.js";

/**
 * A replayed request wakes the execution again (docs/engine.md, "Wake-ups without loss"): the
 * original may have committed and died before waking. Each test commits the original straight
 * into PostgreSQL without a wake; the sweep runs once an hour here, so only the replay can wake.
 */

let api: ApiHarness;
beforeAll(async () => {
  api = await startApiHarness(import.meta.url, { sweepIntervalMs: 3_600_000 });
});
afterAll(async () => {
  await api?.stop();
});

describe("replays wake again", () => {
  it("a signal replayed with its Idempotency-Key wakes the execution", async () => {
    const started = await api.as("integrator").post("/v1/workflows/apitest.signal/executions").send({});
    const id = started.body.id as string;
    await api.waitFor(id, (b) => b.status === "waiting", "waiting for go");
    await api.pool.query(
      "INSERT INTO signals (execution_id, name, payload, idempotency_key) VALUES ($1, 'go', '{\"n\":3}', 'k-1')",
      [id],
    );
    const replay = await api
      .as("integrator")
      .post(`/v1/executions/${id}/signals/go`)
      .set("idempotency-key", "k-1")
      .send({ n: 3 });
    expect(replay.status).toBe(202);
    expect(replay.body.duplicate).toBe(true);
    const done = await api.waitFor(id, (b) => b.status === "completed", "completed");
    expect(done.result).toEqual({ n: 3 });
  });

  it("a batch of signals repeated by the confirmation watcher's next tick wakes the execution", async () => {
    const started = await api.as("integrator").post("/v1/workflows/apitest.signal/executions").send({});
    const id = started.body.id as string;
    await api.waitFor(id, (b) => b.status === "waiting", "waiting for go");
    // The watcher's first tick stored the signal and died before waking.
    await api.pool.query(
      "INSERT INTO signals (execution_id, name, payload, idempotency_key) VALUES ($1, 'go', '{\"n\":4}', 'tick-1')",
      [id],
    );
    const { client, close } = createExecutionClient({
      pool: api.pool,
      redis: api.redis,
      prefix: api.prefix,
      registry: new WorkflowRegistry(API_TEST_WORKFLOWS),
      logger: createLogger({ level: "error" }),
    });
    try {
      const outcomes = await client.signalMany([
        { executionId: id, name: "go", payload: { n: 4 }, idempotencyKey: "tick-1" },
      ]);
      expect(outcomes.get(id)).toBe("repeated");
      const done = await api.waitFor(id, (b) => b.status === "completed", "completed");
      expect(done.result).toEqual({ n: 4 });
    } finally {
      await close();
    }
  });

  it("a vote cast again after the deciding vote wakes the execution", async () => {
    const started = await api
      .as("integrator")
      .post("/v1/workflows/apitest.approve/executions")
      .send({ amount: "9" });
    const id = started.body.id as string;
    const view = await api.waitFor(id, (b) => b.status === "waiting", "waiting for approval");
    const { paramsHash } = (view.waitingFor as { details: { paramsHash: string } }[])[0]?.details ?? {};
    // The deciding vote and its decision signal committed; the API died before waking.
    const outcome = await new PgApprovals(api.pool).vote({
      orgId: "org-a",
      executionId: id,
      name: "release",
      approver: { keyId: api.keyIds.approver, name: "approver", role: "approver", subject: "approver" },
      decision: "approve",
      paramsHash: paramsHash as string,
      reason: null,
    });
    expect(outcome).toMatchObject({ kind: "recorded" });
    const again = await api
      .as("approver")
      .post(`/v1/executions/${id}/approvals/release`)
      .send({ decision: "approve", paramsHash });
    expect(again.status).toBe(409);
    const done = await api.waitFor(id, (b) => b.status === "completed", "completed");
    expect(done.result).toMatchObject({ approved: true });
  });
});
