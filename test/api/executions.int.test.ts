import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RecordedHistory, replayHistory } from "../../src/engine/recorded-history.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { API_TEST_WORKFLOWS } from "./fixtures/api-workflows.js";
import { type ApiHarness, startApiHarness } from "./support/api-harness.js";

let api: ApiHarness;
beforeAll(async () => {
  api = await startApiHarness(import.meta.url);
});
afterAll(async () => {
  await api?.stop();
});

const start = (workflow: string) => `/v1/workflows/${workflow}/executions`;

/** [kind, name, state, has completedAt] of every position, as an operator reads them. */
async function stepStates(id: string): Promise<[string, string, string, boolean][]> {
  const { body } = await api.as("operator").get(`/v1/executions/${id}/steps`);
  return body.steps.map((s: { kind: string; name: string; state: string; completedAt: string | null }) => [
    s.kind,
    s.name,
    s.state,
    s.completedAt !== null,
  ]);
}

describe("POST /v1/workflows/{name}/executions", () => {
  it("answers 202 with the status resource, a Location and Vary: Prefer", async () => {
    const res = await api.as("integrator").post(start("apitest.echo")).send({ text: "hi", delayMs: 60_000 });
    expect(res.status).toBe(202);
    expect(res.headers.location).toBe(`/v1/executions/${res.body.id}`);
    expect(res.headers.vary).toMatch(/Prefer/);
    expect(res.headers["preference-applied"]).toBeUndefined();
    expect(res.body).toMatchObject({
      workflow: "apitest.echo",
      workflowVersion: 1,
      result: null,
      failure: null,
    });
    expect(["running", "waiting"]).toContain(res.body.status);
  });

  it("Prefer: wait answers 200 with the result when it finishes in time; typed values are decoded first", async () => {
    const res = await api
      .as("integrator")
      .post(start("apitest.echo"))
      .set("prefer", "wait=5")
      .send({ text: "fast", amount: "21" });
    expect(res.status).toBe(200);
    expect(res.headers["preference-applied"]).toBe("wait=5");
    expect(res.headers.vary).toMatch(/Prefer/);
    expect(res.body).toMatchObject({
      status: "completed",
      result: { text: "fast", doubled: "42", amountType: "bigint" },
      completedAt: expect.any(String),
    });
  });

  it("Prefer: wait answers 202 when the wait runs out, and caps N by configuration", async () => {
    const began = Date.now();
    const res = await api
      .as("integrator")
      .post(start("apitest.echo"))
      .set("prefer", "wait=1")
      .send({ text: "slow", delayMs: 60_000 });
    expect(res.status).toBe(202);
    expect(Date.now() - began).toBeGreaterThanOrEqual(900);
    expect(res.headers["preference-applied"]).toBe("wait=1");
    const capped = await api
      .as("integrator")
      .post(start("apitest.echo"))
      .set("prefer", "respond-async, wait=3600")
      .send({ text: "fast2" });
    expect(capped.headers["preference-applied"]).toBe("wait=5");
  });

  it("Prefer: wait answers 200 with the failure (code, message, retryable guidance)", async () => {
    const res = await api.as("integrator").post(start("apitest.fail")).set("prefer", "wait=5").send({});
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("failed");
    expect(res.body.failure).toMatchObject({
      code: "TEST_REFUSED",
      message: "refused on purpose",
      retryable: false,
      guidance: expect.stringContaining("Permanent"),
    });
  });

  it("refuses invalid input with 422 INPUT_INVALID and field-level errors", async () => {
    const res = await api.as("integrator").post(start("apitest.echo")).send({ text: "", amount: "12x" });
    expect(res.status).toBe(422);
    expect(res.headers["content-type"]).toContain("application/problem+json");
    expect(res.body).toMatchObject({
      type: "https://tenor.dev/problems/input-invalid",
      code: "INPUT_INVALID",
      status: 422,
      instance: "/v1/workflows/apitest.echo/executions",
    });
    expect(res.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([
      "body.amount",
      "body.text",
    ]);
  });

  it("refuses an unknown workflow with 404 WORKFLOW_UNKNOWN", async () => {
    const res = await api.as("integrator").post(start("apitest.nope")).send({});
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({
      code: "WORKFLOW_UNKNOWN",
      type: "https://tenor.dev/problems/workflow-unknown",
    });
  });
});

describe("reading executions", () => {
  it("GET /v1/executions/{id} shows what it waits for and until when", async () => {
    const { body } = await api.as("integrator").post(start("apitest.signal")).send({});
    const view = await api.waitFor(body.id, (b) => b.status === "waiting", "waiting");
    expect(view.waitingFor).toEqual([{ kind: "signal", name: "go", position: 0, until: expect.any(String) }]);
    expect(view.wakeAt).toEqual(expect.any(String));
    expect(view.links).toEqual({
      self: `/v1/executions/${body.id}`,
      steps: `/v1/executions/${body.id}/steps`,
      approvals: `/v1/executions/${body.id}/approvals`,
      activity: `/v1/executions/${body.id}/activity`,
    });
  });

  it("GET /v1/executions/{id}/steps shows payloads only to operator and admin", async () => {
    const { body } = await api
      .as("integrator")
      .post(start("apitest.echo"))
      .set("prefer", "wait=5")
      .send({ text: "j" });
    const asIntegrator = await api.as("integrator").get(`/v1/executions/${body.id}/steps`);
    expect(asIntegrator.status).toBe(200);
    expect(asIntegrator.body.payloadsIncluded).toBe(false);
    expect(asIntegrator.body.steps).toEqual([
      expect.objectContaining({
        position: 0,
        kind: "step",
        name: "echo",
        state: "ok",
        attempts: 1,
        errorCode: null,
      }),
    ]);
    expect(asIntegrator.body.steps[0]).not.toHaveProperty("result");
    expect(asIntegrator.body.steps[0].durationMs).toEqual(expect.any(Number));
    const asOperator = await api.as("operator").get(`/v1/executions/${body.id}/steps`);
    expect(asOperator.body.payloadsIncluded).toBe(true);
    expect(asOperator.body.steps[0].result).toEqual({ text: "j", doubled: null, amountType: "undefined" });
  });

  it("GET /v1/executions/{id}/history exports the recorded history to operator and admin, and it replays", async () => {
    const { body } = await api
      .as("integrator")
      .post(start("apitest.echo"))
      .set("prefer", "wait=5")
      .send({ text: "h" });
    const asIntegrator = await api.as("integrator").get(`/v1/executions/${body.id}/history`);
    expect(asIntegrator.status).toBe(403);
    const res = await api.as("operator").get(`/v1/executions/${body.id}/history`);
    expect(res.status).toBe(200);
    const history = RecordedHistory.parse(res.body);
    expect(history.execution).toMatchObject({
      id: body.id,
      workflow: "apitest.echo",
      workflowVersion: 1,
      status: "completed",
      input: { text: "h" },
      output: { text: "h", doubled: null, amountType: "undefined" },
      failure: null,
    });
    expect(history.journal).toEqual([
      expect.objectContaining({ position: 0, kind: "step", name: "echo", state: "ok", seq: 1, cause: 0 }),
    ]);
    expect(await replayHistory(history, new WorkflowRegistry(API_TEST_WORKFLOWS))).toEqual({
      ok: true,
      reached: "completed",
    });
    const missing = await api
      .as("operator")
      .get("/v1/executions/00000000-0000-4000-8000-000000000000/history");
    expect(missing.status).toBe(404);
  });

  it("an unknown or malformed id is 404 EXECUTION_NOT_FOUND", async () => {
    for (const id of ["00000000-0000-4000-8000-000000000000", "not-a-uuid"]) {
      const res = await api.as("integrator").get(`/v1/executions/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("EXECUTION_NOT_FOUND");
    }
  });

  it("GET /v1/executions filters by workflow, status, key and created range, with cursor paging", async () => {
    const since = new Date().toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await api
        .as("integrator")
        .post(start("apitest.signal"))
        .send({ label: `p${i}` });
      ids.push(res.body.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: Record<string, string> = { workflow: "apitest.signal", createdAfter: since, limit: "2" };
      if (cursor) query.cursor = cursor;
      const res = await api.as("approver").get("/v1/executions").query(query);
      expect(res.status).toBe(200);
      seen.push(...res.body.items.map((i: { id: string }) => i.id));
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen.sort()).toEqual([...ids].sort());
    const byStatus = await api
      .as("operator")
      .get("/v1/executions")
      .query({ status: "completed,failed", workflow: "apitest.signal" });
    expect(byStatus.body.items).toEqual([]);
    const before = await api
      .as("operator")
      .get("/v1/executions")
      .query({ createdBefore: since, workflow: "apitest.signal" });
    expect(before.body.items.map((i: { id: string }) => i.id)).not.toContain(ids[0]);
    const bad = await api
      .as("operator")
      .get("/v1/executions")
      .query({ status: "sleeping", limit: "0", cursor: "zz" });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("REQUEST_INVALID");
    expect(bad.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([
      "query.limit",
      "query.status",
    ]);
  });
});

describe("signals", () => {
  it("delivers a signal validated by the workflow's declared schema, with its own idempotency", async () => {
    const { body } = await api.as("integrator").post(start("apitest.signal")).send({});
    await api.waitFor(body.id, (b) => b.status === "waiting", "waiting");
    const url = `/v1/executions/${body.id}/signals/go`;
    const invalid = await api.as("integrator").post(url).send({ n: "seven" });
    expect(invalid.status).toBe(422);
    expect(invalid.body).toMatchObject({ code: "SIGNAL_INVALID", errors: [{ pointer: "body.n" }] });
    const reserved = await api
      .as("integrator")
      .post(`/v1/executions/${body.id}/signals/$approval:x`)
      .send({});
    expect(reserved.status).toBe(403);
    expect(reserved.body.code).toBe("SIGNAL_NAME_RESERVED");
    const first = await api.as("integrator").post(url).set("idempotency-key", "sig-1").send({ n: 7 });
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ executionId: body.id, signal: "go", duplicate: false });
    const replay = await api.as("integrator").post(url).set("idempotency-key", "sig-1").send({ n: 7 });
    expect(replay.status).toBe(202);
    expect(replay.body.duplicate).toBe(true);
    const reused = await api.as("integrator").post(url).set("idempotency-key", "sig-1").send({ n: 8 });
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe("IDEMPOTENCY_KEY_REUSED");
    const done = await api.waitFor(body.id, (b) => b.status === "completed", "completed");
    expect(done.result).toEqual({ n: 7 });
    const late = await api.as("integrator").post(url).send({ n: 9 });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe("EXECUTION_TERMINAL");
  });
});

describe("cancel", () => {
  it("ends a waiting execution failed with CANCELLED; a second cancel of a terminal one is 409", async () => {
    const { body } = await api.as("integrator").post(start("apitest.signal")).send({});
    await api.waitFor(body.id, (b) => b.status === "waiting", "waiting");
    expect(await stepStates(body.id)).toEqual([["signal", "go", "pending", false]]);
    const res = await api.as("integrator").post(`/v1/executions/${body.id}/cancel`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ executionId: body.id, cancelRequestedAt: expect.any(String) });
    const done = await api.waitFor(body.id, (b) => b.status === "failed", "failed");
    expect(done.failure).toMatchObject({ code: "CANCELLED", retryable: false });
    expect(done.cancelRequestedAt).toEqual(res.body.cancelRequestedAt);
    // The wait can no longer end: /steps says so instead of showing it pending forever.
    expect(await stepStates(body.id)).toEqual([["signal", "go", "cancelled", true]]);
    const again = await api.as("operator").post(`/v1/executions/${body.id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("EXECUTION_TERMINAL");
  });

  it("cancels an execution parked on a long timer", async () => {
    const { body } = await api
      .as("integrator")
      .post(start("apitest.echo"))
      .send({ text: "t", delayMs: 600_000 });
    await api.waitFor(body.id, (b) => b.status === "waiting", "waiting");
    expect((await api.as("admin").post(`/v1/executions/${body.id}/cancel`)).status).toBe(202);
    const done = await api.waitFor(body.id, (b) => b.status === "failed", "failed");
    expect(done.failure).toMatchObject({ code: "CANCELLED" });
  });

  it("closes the pending positions of a cancelled parent and of its cancelled child", async () => {
    const { body } = await api.as("integrator").post(start("apitest.approve-parent")).send({ amount: "5" });
    await api.waitFor(body.id, (b) => b.status === "waiting", "parent waiting");
    expect(await stepStates(body.id)).toEqual([["child", "apitest.approve", "pending", false]]);
    const childId = (await api.as("operator").get(`/v1/executions?parentId=${body.id}`)).body.items[0]
      ?.id as string;
    await api.waitFor(childId, (b) => b.status === "waiting", "child waiting");
    expect((await api.as("admin").post(`/v1/executions/${body.id}/cancel`)).status).toBe(202);
    await api.waitFor(body.id, (b) => b.status === "failed", "parent failed");
    await api.waitFor(childId, (b) => b.status === "failed", "child failed");
    expect(await stepStates(body.id)).toEqual([["child", "apitest.approve", "cancelled", true]]);
    expect((await stepStates(childId)).every(([, , state]) => state !== "pending")).toBe(true);
  });

  it("approvers may not cancel", async () => {
    const { body } = await api.as("integrator").post(start("apitest.signal")).send({});
    const res = await api.as("approver").post(`/v1/executions/${body.id}/cancel`);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("FORBIDDEN");
  });
});

describe("platform status", () => {
  it("counts per workflow and status, oldest pending, and no-mutation executions", async () => {
    await api.pool.query(
      "UPDATE executions SET updated_at = now() - interval '2 hours' WHERE id = (SELECT id FROM executions WHERE status = 'waiting' AND workflow = 'apitest.signal' ORDER BY created_at LIMIT 1)",
    );
    const res = await api.as("operator").get("/v1/platform/status");
    expect(res.status).toBe(200);
    expect(res.body.thresholds).toEqual({ noMutationSeconds: 3600 });
    // The runner registered its schedules; a schedule whose last attempt is long past shows overdue or stopped.
    const names = res.body.schedules.map((schedule: { name: string }) => schedule.name);
    expect(names).toEqual(
      expect.arrayContaining(["execution-sweep", "monitoring-rollups", "blockchain-health", "retention"]),
    );
    await api.pool.query(
      "UPDATE schedules SET last_attempt_at = now() - interval '10 days', registered_at = now() - interval '10 days' WHERE name = 'retention'",
    );
    const later = await api.as("operator").get("/v1/platform/status");
    // Retention runs daily, so no tick can refresh it during the test.
    const retention = later.body.schedules.find(
      (schedule: { name: string }) => schedule.name === "retention",
    );
    expect(retention.state).toBe("stopped");
    expect(retention.lateByMs).toBeGreaterThan(0);
    const signal = res.body.workflows.find((w: { workflow: string }) => w.workflow === "apitest.signal");
    expect(signal.counts.waiting).toBeGreaterThanOrEqual(5);
    expect(signal.oldestPending).toMatchObject({ id: expect.any(String), createdAt: expect.any(String) });
    expect(res.body.noMutation.count).toBeGreaterThanOrEqual(1);
    expect(res.body.noMutation.executions[0]).toMatchObject({
      workflow: "apitest.signal",
      status: "waiting",
    });
    expect(res.body.totals.completed).toBeGreaterThanOrEqual(1);
    expect((await api.as("integrator").get("/v1/platform/status")).status).toBe(403);
  });
});
