import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, startApiHarness } from "./support/api-harness.js";

let api: ApiHarness;
beforeAll(async () => {
  api = await startApiHarness(import.meta.url);
});
afterAll(async () => {
  await api?.stop();
});

const echo = "/v1/workflows/apitest.echo/executions";

describe("Idempotency-Key on start", () => {
  it("same key and same body: the same execution, answered as originally (202), marked replayed", async () => {
    const first = await api
      .as("integrator")
      .post(echo)
      .set("idempotency-key", "k-same")
      .send({ text: "a", delayMs: 60_000 });
    const again = await api
      .as("integrator")
      .post(echo)
      .set("idempotency-key", "k-same")
      .send({ delayMs: 60_000, text: "a" });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    expect(again.body.idempotencyExpiresAt).toEqual(expect.any(String));
  });

  it("a replay of a request that finished with Prefer: wait answers 200 again", async () => {
    const first = await api
      .as("integrator")
      .post(echo)
      .set("idempotency-key", "k-200")
      .set("prefer", "wait=5")
      .send({ text: "b" });
    const again = await api
      .as("integrator")
      .post(echo)
      .set("idempotency-key", "k-200")
      .set("prefer", "wait=5")
      .send({ text: "b" });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: first.body.id, status: "completed", result: first.body.result });
  });

  it("same key and another body: 422 naming the key", async () => {
    await api.as("integrator").post(echo).set("idempotency-key", "k-diff").send({ text: "c" });
    const res = await api
      .as("integrator")
      .post(echo)
      .set("idempotency-key", "k-diff")
      .send({ text: "other" });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("IDEMPOTENCY_KEY_REUSED");
    expect(res.body.detail).toContain('"k-diff"');
    const otherWorkflow = await api
      .as("integrator")
      .post("/v1/workflows/apitest.fail/executions")
      .set("idempotency-key", "k-diff")
      .send({});
    expect(otherWorkflow.status).toBe(422);
  });

  it("a key whose execution is in flight never starts a second one, even under concurrency", async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        api.as("integrator").post(echo).set("idempotency-key", "k-race").send({ text: "d", delayMs: 60_000 }),
      ),
    );
    expect(new Set(results.map((r) => r.status))).toEqual(new Set([202]));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    const { rows } = await api.pool.query(
      "SELECT count(*)::int AS n FROM executions WHERE idempotency_key = 'k-race'",
    );
    expect(rows[0].n).toBe(1);
  });

  it("a key whose execution failed answers that failed execution; a new key starts a fresh attempt", async () => {
    const failUrl = "/v1/workflows/apitest.fail/executions";
    const first = await api
      .as("integrator")
      .post(failUrl)
      .set("idempotency-key", "k-fail")
      .set("prefer", "wait=5")
      .send({});
    expect(first.body.status).toBe("failed");
    const again = await api
      .as("integrator")
      .post(failUrl)
      .set("idempotency-key", "k-fail")
      .set("prefer", "wait=5")
      .send({});
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      id: first.body.id,
      status: "failed",
      failure: { code: "TEST_REFUSED" },
    });
    const fresh = await api.as("integrator").post(failUrl).set("idempotency-key", "k-fail-2").send({});
    expect(fresh.body.id).not.toBe(first.body.id);
  });

  it("keys are scoped to the organisation", async () => {
    const a = await api.as("integrator").post(echo).set("idempotency-key", "k-org").send({ text: "e" });
    const b = await api.as("otherIntegrator").post(echo).set("idempotency-key", "k-org").send({ text: "e" });
    expect(b.status).toBe(202);
    expect(b.body.id).not.toBe(a.body.id);
  });

  it("an expired key is released: the next start with it creates a new execution", async () => {
    const first = await api.as("integrator").post(echo).set("idempotency-key", "k-exp").send({ text: "f" });
    await api.pool.query(
      "UPDATE executions SET idempotency_expires_at = now() - interval '1 second' WHERE id = $1",
      [first.body.id],
    );
    const second = await api
      .as("integrator")
      .post(echo)
      .set("idempotency-key", "k-exp")
      .send({ text: "other body" });
    expect(second.status).toBe(202);
    expect(second.body.id).not.toBe(first.body.id);
    const old = await api.as("integrator").get(`/v1/executions/${first.body.id}`);
    expect(old.body.idempotencyKey).toBeNull();
  });

  it("refuses a malformed Idempotency-Key with 400 naming the header", async () => {
    const res = await api.as("integrator").post(echo).set("idempotency-key", "has space").send({ text: "g" });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ pointer: "header.idempotency-key", message: expect.any(String) }]);
  });
});
