import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/observability/logger.js";
import { PgWebhookDispatch } from "../../src/webhooks/store/pg-webhook-dispatch.js";
import { startWebhookDispatcher, type WebhookDispatcher } from "../../src/webhooks/webhook-dispatcher.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { subscribeReceiver, TEST_KEYRING, TEST_WEBHOOK_SETTINGS, until } from "../webhooks/support.js";
import { type ApiHarness, startApiHarness } from "./support/api-harness.js";

/**
 * The webhooks routes: tenant isolation (another organisation's subscription or delivery is a 404
 * like a missing one), roles, the secret shown once, bad input naming field, value and rule, and a
 * test delivery that dead-letters against a failing receiver and is redelivered.
 */
let h: ApiHarness;
let receiver: WebhookReceiver;
let dispatcher: WebhookDispatcher;

beforeAll(async () => {
  h = await startApiHarness(import.meta.url);
  receiver = await startWebhookReceiver();
  dispatcher = startWebhookDispatcher({
    store: new PgWebhookDispatch(h.pool),
    settings: TEST_WEBHOOK_SETTINGS,
    keyring: TEST_KEYRING,
    logger: createLogger({ level: "error" }),
  });
}, 60_000);

afterAll(async () => {
  await dispatcher?.stop();
  await receiver?.close();
  await h?.stop();
});

const del = (principal: "admin" | "otherAdmin", url: string) =>
  request(h.app).delete(url).set("authorization", `Bearer ${h.keys[principal]}`);

describe("webhook subscriptions", () => {
  it("shows the secret once, scopes every read to the key's organisation and checks roles", async () => {
    const created = await h
      .as("admin")
      .post("/v1/webhooks/subscriptions")
      .send({ url: "https://hooks.example.com/tenor", events: ["execution.completed"], description: "ops" });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    const { id, secret } = created.body as { id: string; secret: string };
    expect(created.headers.location).toBe(`/v1/webhooks/subscriptions/${id}`);

    const read = await h.as("operator").get(`/v1/webhooks/subscriptions/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      id,
      url: "https://hooks.example.com/tenor",
      events: ["execution.completed"],
      description: "ops",
      createdAt: expect.any(String),
    });
    const list = await h.as("admin").get("/v1/webhooks/subscriptions");
    expect(list.body.items.map((s: { id: string }) => s.id)).toEqual([id]);
    expect(JSON.stringify([read.body, list.body])).not.toContain(secret);
    // At rest the secret is encrypted under the api's first key, never stored as is.
    const stored = await h.pool.query("SELECT * FROM webhook_subscriptions WHERE id = $1", [id]);
    expect(stored.rows[0].secret_key_id).toBe(TEST_KEYRING.primaryKeyId);
    expect(JSON.stringify(stored.rows)).not.toContain(secret.slice("whsec_".length));
    expect(
      TEST_KEYRING.open(id, { keyId: stored.rows[0].secret_key_id, sealed: stored.rows[0].secret }),
    ).toBe(secret);
    // An api with no key refuses new subscriptions rather than store a secret in plain text.
    const keyless = await request(h.replica({}))
      .post("/v1/webhooks/subscriptions")
      .set("authorization", `Bearer ${h.keys.admin}`)
      .send({ url: "https://hooks.example.com/keyless", events: ["execution.completed"] });
    expect(keyless.status).toBe(503);
    expect(keyless.body.code).toBe("WEBHOOK_SECRET_KEY_MISSING");
    expect(keyless.body.detail).toContain("set webhooks.secretKeys");
    expect(
      (await h.pool.query("SELECT 1 FROM webhook_subscriptions WHERE url LIKE '%/keyless'")).rowCount,
    ).toBe(0);

    const theirs = await h.as("otherAdmin").get(`/v1/webhooks/subscriptions/${id}`);
    expect(theirs.status).toBe(404);
    expect(theirs.body.code).toBe("WEBHOOK_SUBSCRIPTION_NOT_FOUND");
    expect((await h.as("otherAdmin").get("/v1/webhooks/subscriptions")).body.items).toEqual([]);
    expect((await h.as("otherAdmin").post(`/v1/webhooks/subscriptions/${id}/test`)).status).toBe(404);
    expect((await del("otherAdmin", `/v1/webhooks/subscriptions/${id}`)).status).toBe(404);

    const integrator = await h
      .as("integrator")
      .post("/v1/webhooks/subscriptions")
      .send({ url: "https://hooks.example.com/x", events: ["execution.failed"] });
    expect(integrator.status).toBe(403);
    expect((await h.as("approver").get("/v1/webhooks/subscriptions")).status).toBe(403);

    expect((await del("admin", `/v1/webhooks/subscriptions/${id}`)).status).toBe(204);
    expect((await h.as("admin").get(`/v1/webhooks/subscriptions/${id}`)).status).toBe(404);
  });

  it("refuses bad input naming the field, the value and the rule", async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ url: "ftp://hooks.example.com", events: ["execution.completed"] }, "body.url", /http or https/],
      [{ url: "http://127.0.0.1:9/x", events: ["execution.completed"] }, "body.url", /internal address/],
      [{ url: "http://localhost/x", events: ["execution.completed"] }, "body.url", /localhost/],
      [{ url: "https://u:p@hooks.example.com", events: ["execution.completed"] }, "body.url", /credentials/],
      [{ url: "not a url", events: ["execution.completed"] }, "body.url", /absolute URL/],
      [
        { url: "https://hooks.example.com", events: ["execution.exploded"] },
        "body.events.0",
        /execution\.completed/,
      ],
      [{ url: "https://hooks.example.com", events: [] }, "body.events", /at least one/],
      [
        { url: "https://hooks.example.com", events: ["execution.failed", "execution.failed"] },
        "body.events",
        /repeat/,
      ],
      [
        { url: "https://hooks.example.com", events: ["execution.failed"], orgId: "org-b" },
        "body.orgId",
        /not a known field/,
      ],
    ];
    for (const [body, pointer, rule] of cases) {
      const res = await h.as("admin").post("/v1/webhooks/subscriptions").send(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("REQUEST_INVALID");
      const error = (res.body.errors as { pointer: string; message: string }[]).find(
        (e) => e.pointer === pointer,
      );
      expect(error?.message ?? res.body.detail, JSON.stringify(res.body)).toMatch(rule);
    }
    const url = await h
      .as("admin")
      .post("/v1/webhooks/subscriptions")
      .send({ url: "http://10.1.2.3/x", events: ["execution.failed"] });
    expect(url.body.detail).toContain('"http://10.1.2.3/x"');
    // The list parameters are refused as on every list route (src/api/query-params.ts).
    const query = await h.as("admin").get("/v1/webhooks/deliveries?limit=0&status=lost&sort=new");
    expect(query.status).toBe(400);
    expect(
      Object.fromEntries(
        query.body.errors.map((e: { pointer: string; message: string }) => [e.pointer, e.message]),
      ),
    ).toEqual({
      "query.limit": 'must be an integer, 1 ≤ v ≤ 200 (got "0")',
      "query.status": 'must be one of pending, delivered, dead, cancelled (got "lost")',
      "query.sort":
        'is not a parameter of this route (subscriptionId, executionId, eventId, status, limit, cursor) (got "new")',
    });
    const cursor = await h.as("admin").get("/v1/webhooks/dead-letters?cursor=bm90LWEtY3Vyc29y");
    expect(cursor.status).toBe(400);
    expect(cursor.body.errors).toEqual([
      {
        pointer: "query.cursor",
        message: 'must be the nextCursor of a previous page, unchanged (got "bm90LWEtY3Vyc29y")',
      },
    ]);
    expect((await h.as("admin").get("/v1/webhooks/deliveries/not-a-uuid")).body.errors[0].pointer).toBe(
      "path.id",
    );
  });
});

describe("deliveries, dead letters and redelivery", () => {
  it("dead-letters a test delivery to a failing receiver; only its organisation sees or redelivers it", async () => {
    // Loopback receivers are internal addresses: the API refuses them, so the row is written directly.
    const subscription = await subscribeReceiver(h.pool, receiver);
    receiver.answer = () => ({ status: 500 });
    const test = await h.as("admin").post(`/v1/webhooks/subscriptions/${subscription.id}/test`);
    expect(test.status).toBe(202);
    const { deliveryId, eventId } = test.body as { deliveryId: string; eventId: string };

    await until("dead-lettered", async () => {
      const res = await h.as("operator").get("/v1/webhooks/dead-letters");
      return res.body.items.some((d: { id: string }) => d.id === deliveryId);
    });
    const letters = await h.as("operator").get("/v1/webhooks/dead-letters");
    expect(letters.body.items[0]).toMatchObject({
      id: deliveryId,
      eventId,
      eventType: "webhook.test",
      status: "dead",
      attempts: TEST_WEBHOOK_SETTINGS.maxAttempts,
      lastStatusCode: 500,
      test: true,
    });
    expect((await h.as("otherOperator").get("/v1/webhooks/dead-letters")).body.items).toEqual([]);
    expect((await h.as("otherOperator").get(`/v1/webhooks/deliveries/${deliveryId}`)).status).toBe(404);
    const foreign = await h.as("otherAdmin").post(`/v1/webhooks/deliveries/${deliveryId}/redeliver`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe("WEBHOOK_DELIVERY_NOT_FOUND");
    expect((await h.as("operator").post(`/v1/webhooks/deliveries/${deliveryId}/redeliver`)).status).toBe(403);

    receiver.answer = () => ({ status: 200 });
    const again = await h.as("admin").post(`/v1/webhooks/deliveries/${deliveryId}/redeliver`);
    expect(again.status).toBe(202);
    await until("delivered", async () => {
      const res = await h.as("operator").get(`/v1/webhooks/deliveries/${deliveryId}`);
      return res.body.status === "delivered";
    });
    const detail = await h.as("operator").get(`/v1/webhooks/deliveries/${deliveryId}`);
    expect(detail.body.receipts.map((r: { statusCode: number }) => r.statusCode)).toEqual([
      ...Array(TEST_WEBHOOK_SETTINGS.maxAttempts).fill(500),
      200,
    ]);
    expect(detail.body.payload).toMatchObject({ id: eventId, type: "webhook.test" });
    expect(JSON.stringify(detail.body)).not.toContain(receiver.secret);
    const sent = receiver.received.filter((r) => r.eventId === eventId);
    expect(sent.every((r) => r.signatureValid)).toBe(true);
    expect(
      (await h.as("admin").get(`/v1/webhooks/deliveries?subscriptionId=${subscription.id}&status=delivered`))
        .body.items,
    ).toHaveLength(1);
  });
});

describe("audit trail", () => {
  type AuditRow = Record<string, unknown>;
  /**
   * The audit row of each request id (sent as `X-Request-Id`), read through `GET /v1/audit` as the
   * organisation's `principal` once all are written: each is appended after its answer has left.
   */
  const auditRows = async (principal: "operator" | "otherOperator", action: string, requestIds: string[]) => {
    let rows: AuditRow[] = [];
    await until(`audit rows ${requestIds.join(", ")}`, async () => {
      const res = await h.as(principal).get("/v1/audit").query({ action, limit: "200" });
      expect(res.status).toBe(200);
      rows = requestIds.map((id) => (res.body.items as AuditRow[]).find((e) => e.requestId === id) ?? {});
      return rows.every((row) => row.id !== undefined);
    });
    return rows;
  };
  const tag = (name: string) => `${name}-${Date.now()}`;

  it("records subscription creates and deletes, test deliveries and redeliveries, accepted or refused", async () => {
    const [createOk, createRole, createUrl] = [tag("create-ok"), tag("create-role"), tag("create-url")];
    const created = await h
      .as("admin")
      .post("/v1/webhooks/subscriptions")
      .set("x-request-id", createOk)
      .send({ url: "https://hooks.example.com/audited", events: ["execution.completed"] });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const refusedRole = await h
      .as("integrator")
      .post("/v1/webhooks/subscriptions")
      .set("x-request-id", createRole)
      .send({ url: "https://hooks.example.com/audited", events: ["execution.completed"] });
    expect(refusedRole.status).toBe(403);
    const refusedUrl = await h
      .as("admin")
      .post("/v1/webhooks/subscriptions")
      .set("x-request-id", createUrl)
      .send({ url: "http://169.254.169.254/latest", events: ["execution.completed"] });
    expect(refusedUrl.status).toBe(400);
    const creates = await auditRows("operator", "webhook.create", [createOk, createRole, createUrl]);
    expect(creates).toMatchObject([
      {
        actorKeyId: h.keyIds.admin,
        subject: "admin",
        orgId: "org-a",
        role: "admin",
        target: id,
        outcome: "accepted",
      },
      { actorKeyId: h.keyIds.integrator, role: "integrator", target: "new", outcome: "FORBIDDEN" },
      { actorKeyId: h.keyIds.admin, target: "new", outcome: "REQUEST_INVALID" },
    ]);

    // Another organisation's attempt is audited under its own organisation, not the owner's.
    const [deleteOk, deleteForeign] = [tag("delete-ok"), tag("delete-foreign")];
    expect(
      (await del("otherAdmin", `/v1/webhooks/subscriptions/${id}`).set("x-request-id", deleteForeign)).status,
    ).toBe(404);
    expect(
      (await del("admin", `/v1/webhooks/subscriptions/${id}`).set("x-request-id", deleteOk)).status,
    ).toBe(204);
    expect(await auditRows("operator", "webhook.delete", [deleteOk])).toMatchObject([
      { actorKeyId: h.keyIds.admin, orgId: "org-a", target: id, outcome: "accepted" },
    ]);
    expect(await auditRows("otherOperator", "webhook.delete", [deleteForeign])).toMatchObject([
      {
        actorKeyId: h.keyIds.otherAdmin,
        orgId: "org-b",
        target: id,
        outcome: "WEBHOOK_SUBSCRIPTION_NOT_FOUND",
      },
    ]);
    const mine = await h.as("operator").get("/v1/audit").query({ action: "webhook.delete", target: id });
    expect(mine.body.items.map((e: AuditRow) => e.orgId)).not.toContain("org-b");

    // A test delivery to the loopback receiver (written directly: the API refuses loopback URLs).
    const subscription = await subscribeReceiver(h.pool, receiver);
    receiver.answer = () => ({ status: 200 });
    const testOk = tag("test-ok");
    const test = await h
      .as("admin")
      .post(`/v1/webhooks/subscriptions/${subscription.id}/test`)
      .set("x-request-id", testOk);
    expect(test.status).toBe(202);
    const { deliveryId } = test.body as { deliveryId: string };
    expect(await auditRows("operator", "webhook.test", [testOk])).toMatchObject([
      { role: "admin", target: subscription.id, outcome: "accepted" },
    ]);
    await until("test delivery delivered", async () => {
      const res = await h.as("operator").get(`/v1/webhooks/deliveries/${deliveryId}`);
      return res.body.status === "delivered";
    });

    // Redelivered to a receiver that hangs: it stays pending, so asking again is refused.
    const [again, pending, operator] = [tag("redeliver-ok"), tag("redeliver-pending"), tag("redeliver-role")];
    const redeliver = (principal: "admin" | "operator", requestId: string) =>
      h.as(principal).post(`/v1/webhooks/deliveries/${deliveryId}/redeliver`).set("x-request-id", requestId);
    receiver.answer = () => "hang";
    expect((await redeliver("admin", again)).status).toBe(202);
    expect((await redeliver("admin", pending)).status).toBe(409);
    expect((await redeliver("operator", operator)).status).toBe(403);
    receiver.answer = () => ({ status: 200 });
    expect(await auditRows("operator", "webhook.redeliver", [again, pending, operator])).toMatchObject([
      { role: "admin", target: deliveryId, outcome: "accepted" },
      { role: "admin", target: deliveryId, outcome: "WEBHOOK_DELIVERY_PENDING" },
      { role: "operator", target: deliveryId, outcome: "FORBIDDEN" },
    ]);
  });
});

describe("delivery lists", () => {
  it("pages newest first with the shared list cursor, to a last page whose nextCursor is null", async () => {
    const all = await h.as("operator").get("/v1/webhooks/deliveries?limit=200");
    const ids = (all.body.items as { id: string }[]).map((d) => d.id);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    expect(all.body.nextCursor).toBeNull();
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page: request.Response = await h
        .as("operator")
        .get("/v1/webhooks/deliveries")
        .query({ limit: "1", ...(cursor ? { cursor } : {}) });
      expect(page.status).toBe(200);
      paged.push(...(page.body.items as { id: string }[]).map((d) => d.id));
      cursor = page.body.nextCursor as string | null;
    } while (cursor !== null && paged.length <= ids.length);
    expect(paged).toEqual(ids);
  });
});
