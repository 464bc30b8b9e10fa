import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, type PrincipalName, startApiHarness } from "./support/api-harness.js";

/**
 * The Platform API holds every JSON string to the rule that decides what PostgreSQL can store
 * (src/values/storable.ts): a U+0000 or a lone surrogate anywhere in a body is a 400 problem
 * naming the field, never a 500 from the database and never a U+FFFD stored in its place. The
 * bodies are sent as raw JSON text so the escapes reach the parser as a client would send them.
 */

let api: ApiHarness;
beforeAll(async () => {
  api = await startApiHarness(import.meta.url);
});
afterAll(async () => {
  await api?.stop();
});

function postRaw(who: PrincipalName, path: string, json: string) {
  return request(api.app)
    .post(path)
    .set("authorization", `Bearer ${api.keys[who]}`)
    .set("content-type", "application/json")
    .send(json);
}

function expectRefused(res: request.Response, pointer: string, rule: RegExp) {
  expect(res.status).toBe(400);
  expect(res.headers["content-type"]).toMatch(/application\/problem\+json/);
  expect(res.body).toMatchObject({ code: "REQUEST_INVALID", retryable: false });
  expect(res.body.errors).toEqual([{ pointer, message: expect.stringMatching(rule) }]);
}

const NUL = /U\+0000/;
const SURROGATE = /lone UTF-16 surrogate/;

async function waitingFor(id: string, kind: string): Promise<{ paramsHash?: string }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { rows } = await api.pool.query(
      "SELECT id, waiting_for FROM executions WHERE (id = $1 OR parent_id = $1) AND status = 'waiting'",
      [id],
    );
    for (const row of rows) {
      const wait = (row.waiting_for ?? []).find((w: { kind: string }) => w.kind === kind);
      if (wait) return { ...wait.details, id: row.id };
    }
    if (Date.now() > deadline) throw new Error(`${id} never waited for ${kind}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("text PostgreSQL cannot store, at the API's edge", () => {
  it("a start with U+0000 or a lone surrogate in its input is a 400 naming the field, and starts nothing", async () => {
    const before = await api.pool.query("SELECT count(*)::int AS n FROM executions");
    expectRefused(
      await postRaw("integrator", "/v1/workflows/apitest.echo/executions", '{"text":"a\\u0000b"}'),
      "body.text",
      NUL,
    );
    expectRefused(
      await postRaw("integrator", "/v1/workflows/apitest.echo/executions", '{"text":"\\udc00"}'),
      "body.text",
      SURROGATE,
    );
    expectRefused(
      await postRaw(
        "integrator",
        "/v1/workflows/apitest.echo/executions",
        '{"text":"x","meta":{"a\\u0000":1}}',
      ),
      "body.meta.a\u0000",
      NUL,
    );
    const after = await api.pool.query("SELECT count(*)::int AS n FROM executions");
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it("a signal payload with U+0000 is a 400 naming the field, and no signal is kept", async () => {
    const started = await api.as("integrator").post("/v1/workflows/apitest.signal/executions").send({});
    expect(started.status).toBe(202);
    const id = started.body.id as string;
    expectRefused(
      await postRaw("integrator", `/v1/executions/${id}/signals/go`, '{"n":1,"note":["ok","x\\u0000"]}'),
      "body.note.1",
      NUL,
    );
    const { rows } = await api.pool.query("SELECT count(*)::int AS n FROM signals WHERE execution_id = $1", [
      id,
    ]);
    expect(rows[0].n).toBe(0);
  });

  it("a vote whose reason is a lone surrogate is refused, not stored as U+FFFD", async () => {
    const started = await api
      .as("integrator")
      .post("/v1/workflows/apitest.approve/executions")
      .send({ amount: "10" });
    expect(started.status).toBe(202);
    const wait = (await waitingFor(started.body.id, "approval")) as { id: string; paramsHash: string };
    const body = `{"decision":"reject","paramsHash":"${wait.paramsHash}","reason":"\\udc00"}`;
    expectRefused(
      await postRaw("approver", `/v1/executions/${wait.id}/approvals/release`, body),
      "body.reason",
      SURROGATE,
    );
    const { rows } = await api.pool.query(
      "SELECT count(*)::int AS n FROM approval_votes WHERE execution_id = $1",
      [wait.id],
    );
    expect(rows[0].n).toBe(0);
    // The approval is still open: a well-formed vote decides it.
    const voted = await api
      .as("approver")
      .post(`/v1/executions/${wait.id}/approvals/release`)
      .send({ decision: "reject", paramsHash: wait.paramsHash, reason: "too much" });
    expect(voted.status).toBeLessThan(300);
  });

  it("a webhook subscription whose url carries U+0000 is a 400 naming the url", async () => {
    expectRefused(
      await postRaw(
        "admin",
        "/v1/webhooks/subscriptions",
        '{"url":"https://hooks.example.com/a\\u0000b","events":["execution.completed"]}',
      ),
      "body.url",
      NUL,
    );
  });
});
