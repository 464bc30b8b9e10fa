import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApprovalParams } from "../../src/engine/approvals.js";
import { PgApiKeys } from "../../src/store/pg-api-keys.js";
import { type ApiHarness, startApiHarness } from "./support/api-harness.js";

let api: ApiHarness;
let signalId: string;
let approvalId: string;
beforeAll(async () => {
  api = await startApiHarness(import.meta.url);
  signalId = (await api.as("integrator").post("/v1/workflows/apitest.signal/executions").send({})).body.id;
  approvalId = (
    await api.as("integrator").post("/v1/workflows/apitest.approve/executions").send({ amount: "1" })
  ).body.id;
  await api.waitFor(signalId, (b) => b.status === "waiting", "waiting");
  await api.waitFor(approvalId, (b) => b.status === "waiting", "waiting");
});
afterAll(async () => {
  await api?.stop();
});

describe("tenancy: another organisation never sees, lists, signals, cancels or approves", () => {
  const others = ["otherIntegrator", "otherApprover", "otherOperator", "otherAdmin"] as const;

  it("reads answer 404 exactly like a missing execution", async () => {
    for (const who of others) {
      for (const path of ["", "/steps", "/approvals"]) {
        const res = await api.as(who).get(`/v1/executions/${signalId}${path}`);
        expect(res.status, `${who} GET ${path}`).toBe(404);
        expect(res.body.code).toBe("EXECUTION_NOT_FOUND");
      }
    }
  });

  it("lists and platform status show only the caller's organisation", async () => {
    const list = await api.as("otherAdmin").get("/v1/executions");
    expect(list.body.items.map((i: { id: string }) => i.id)).not.toContain(signalId);
    const status = await api.as("otherAdmin").get("/v1/platform/status");
    expect(status.body.workflows).toEqual([]);
    const own = await api.as("admin").get("/v1/executions");
    expect(own.body.items.map((i: { id: string }) => i.id)).toContain(signalId);
  });

  it("signals, cancels and votes answer 404 and change nothing", async () => {
    const signal = await api.as("otherAdmin").post(`/v1/executions/${signalId}/signals/go`).send({ n: 1 });
    expect(signal.status).toBe(404);
    const cancel = await api.as("otherAdmin").post(`/v1/executions/${signalId}/cancel`);
    expect(cancel.status).toBe(404);
    const vote = await api
      .as("otherApprover")
      .post(`/v1/executions/${approvalId}/approvals/release`)
      .send({ decision: "approve", paramsHash: hashApprovalParams({ amount: "1" }) });
    expect(vote.status).toBe(404);
    const { rows } = await api.pool.query(
      "SELECT (SELECT count(*)::int FROM signals) AS signals, (SELECT count(*)::int FROM approval_votes) AS votes, (SELECT count(*)::int FROM executions WHERE cancel_requested_at IS NOT NULL) AS cancels",
    );
    expect(rows[0]).toEqual({ signals: 0, votes: 0, cancels: 0 });
    expect((await api.as("operator").get(`/v1/executions/${signalId}`)).body.status).toBe("waiting");
  });
});

describe("authentication and error shapes", () => {
  it("no key, an unknown key and a revoked key are 401 problem+json with WWW-Authenticate", async () => {
    const none = await request(api.app).get("/v1/executions");
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect(none.headers["content-type"]).toContain("application/problem+json");
    expect(none.body).toMatchObject({
      type: "https://tenor.dev/problems/unauthenticated",
      title: "Unauthorized",
      status: 401,
      code: "UNAUTHENTICATED",
      instance: "/v1/executions",
      detail: expect.any(String),
    });
    const unknown = await request(api.app).get("/v1/executions").set("authorization", "Bearer tnr_nope");
    expect(unknown.status).toBe(401);
    const keys = new PgApiKeys(api.pool);
    const { issueApiKey } = await import("../../src/api/auth/api-key.js");
    const issued = await issueApiKey(keys, { orgId: "org-a", role: "admin", subject: "revoked-admin" });
    const auth = { authorization: `Bearer ${issued.key}` };
    expect((await request(api.app).get("/v1/executions").set(auth)).status).toBe(200);
    await keys.revoke(issued.record.id);
    expect((await request(api.app).get("/v1/executions").set(auth)).status).toBe(401);
  });

  it("stores only the key's hash", async () => {
    const { rows } = await api.pool.query("SELECT key_hash FROM api_keys");
    for (const key of Object.values(api.keys)) {
      expect(rows.some((r) => r.key_hash === key)).toBe(false);
      expect(rows.some((r) => r.key_hash.length === 64)).toBe(true);
    }
  });

  it("unknown routes, malformed JSON, wrong content type and oversized bodies are problem+json", async () => {
    const unknown = await api.as("admin").get("/v1/nothing");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: "NOT_FOUND", instance: "/v1/nothing" });
    const anonymousUnknown = await request(api.app).get("/nowhere");
    expect(anonymousUnknown.status).toBe(404);
    expect(anonymousUnknown.headers["content-type"]).toContain("application/problem+json");
    const malformed = await api
      .as("integrator")
      .post("/v1/workflows/apitest.echo/executions")
      .set("content-type", "application/json")
      .send('{"text": ');
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({
      code: "MALFORMED_JSON",
      type: "https://tenor.dev/problems/malformed-json",
    });
    expect(JSON.stringify(malformed.body)).not.toMatch(/at .*\.js|node_modules/);
    const textual = await api
      .as("integrator")
      .post("/v1/workflows/apitest.echo/executions")
      .set("content-type", "text/plain")
      .send("text=hi");
    expect(textual.status).toBe(415);
    expect(textual.body.code).toBe("UNSUPPORTED_MEDIA_TYPE");
    const big = await api
      .as("integrator")
      .post("/v1/workflows/apitest.echo/executions")
      .send({ text: "x".repeat(1_100_000) });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe("PAYLOAD_TOO_LARGE");
  });

  it("sends security headers and no x-powered-by", async () => {
    const res = await api.as("admin").get("/v1/executions");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(res.headers["strict-transport-security"]).toBeDefined();
    expect(res.headers["x-powered-by"]).toBeUndefined();
  });

  it("serves /livez, /readyz and /openapi.json without a key", async () => {
    expect((await request(api.app).get("/livez")).status).toBe(200);
    expect((await request(api.app).get("/readyz")).status).toBe(200);
    const doc = await request(api.app).get("/openapi.json");
    expect(doc.status).toBe(200);
    expect(doc.body.paths["/v1/workflows/apitest.echo/executions"]).toBeDefined();
  });
});
