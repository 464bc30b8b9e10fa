import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../../src/api/auth/api-key.js";
import { PgApiKeys } from "../../src/store/pg-api-keys.js";
import { sampleValue } from "../observability/metric-labels.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { freePort } from "../support/ports.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";
import { eventually, type RoleProcess, roleReady, spawnRole } from "../support/role-process.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

/**
 * Webhooks as a receiver's operator reads them, against the real api and runner roles with the
 * release's workflows: what each `execution.waiting` event says, deliveries by execution and by
 * event, an event's settlement, and an abandoned attempt's receipt (docs/webhooks.md).
 */
let db: TestDatabase;
let base: string;
let env: Record<string, string>;
let keys: Record<"integrator" | "admin", string>;
let receiver: WebhookReceiver;
let hanging: WebhookReceiver;
const prefix = testRedisPrefix(import.meta.url);
const roles: RoleProcess[] = [];
let runner: RoleProcess;

beforeAll(async () => {
  db = await createTestDatabase();
  const dir = mkdtempSync(path.join(tmpdir(), "tenor-receiver-"));
  const config = path.join(dir, "config.yaml");
  writeFileSync(
    config,
    JSON.stringify({
      webhooks: {
        pollIntervalMs: 100,
        timeoutMs: 1000,
        maxAttempts: 2,
        backoff: { baseMs: 10, maxMs: 50 },
        allowPrivateAddresses: true,
        secretKeys: [{ id: "k1", key: { env: "TENOR_WEBHOOK_KEY_K1" } }],
      },
    }),
  );
  env = {
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl(),
    TENOR_REDIS_PREFIX: prefix,
    TENOR_CONFIG: config,
    TENOR_WEBHOOK_KEY_K1: randomBytes(32).toString("base64"),
    TENOR_API_PORT: String(await freePort()),
    TENOR_RUNNER_HEALTH_PORT: String(await freePort()),
  };
  base = `http://127.0.0.1:${env.TENOR_API_PORT}`;
  runner = spawnRole({ ...env, DAPI_ROLE: "runner" });
  const api = spawnRole({ ...env, DAPI_ROLE: "api" });
  roles.push(api, runner);
  const store = new PgApiKeys(db.pool);
  const issue = async (role: "integrator" | "admin") =>
    (await issueApiKey(store, { orgId: "org-a", role, name: role, subject: `${role}@test` })).key;
  keys = { integrator: await issue("integrator"), admin: await issue("admin") };
  receiver = await startWebhookReceiver();
  hanging = await startWebhookReceiver();
  hanging.answer = () => "hang";
  // Both roles start at once; on a loaded 2-core machine either may take tens of seconds.
  await Promise.all([
    roleReady("api ready", api, base),
    roleReady("runner ready", runner, `http://127.0.0.1:${env.TENOR_RUNNER_HEALTH_PORT}`),
  ]);
}, 120_000);

afterAll(async () => {
  for (const role of roles) role.kill("SIGKILL");
  await Promise.all(roles.map((r) => r.exited));
  await Promise.allSettled([receiver?.close(), hanging?.close()]);
  await deleteRedisPrefix(prefix).catch(() => undefined);
  await db?.drop();
});

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Body = any;
async function call(who: keyof typeof keys, method: string, url: string, body?: unknown): Promise<Body> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${keys[who]}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { ...(text ? JSON.parse(text) : {}), httpStatus: res.status };
}

async function subscribe(to: WebhookReceiver, events: string[]): Promise<string> {
  const created = await call("admin", "POST", "/v1/webhooks/subscriptions", { url: to.url, events });
  expect(created.httpStatus, JSON.stringify(created)).toBe(201);
  to.secret = created.secret;
  return created.id;
}

describe("a run's events and deliveries as the receiver's operator reads them", () => {
  it("each execution.waiting names its wait; deliveries filter by execution and event; settlement is shown", async () => {
    await subscribe(receiver, ["execution.waiting"]);
    const started = await call("integrator", "POST", "/v1/workflows/demo.asset-issue/executions", {
      symbol: "RCV1",
    });
    expect(started.httpStatus, JSON.stringify(started)).toBe(202);
    const id: string = started.id;
    await eventually("the run waits for its approval", async () => {
      const body = await call("integrator", "GET", `/v1/executions/${id}`);
      return body.status === "waiting" && body.waitingFor?.[0]?.kind === "approval";
    });
    const waits = () => receiver.received.filter((r) => r.eventType === "execution.waiting" && !r.duplicate);
    await eventually("the approval's event", () =>
      waits().some((r) => (r.body as Body).data.waitingFor?.[0]?.kind === "approval"),
    );
    // One event per time the run parked, each naming what it parked on.
    const parked = waits().map((r) => (r.body as Body).data.waitingFor as { kind: string; name: string }[]);
    for (const waitingFor of parked) expect(waitingFor.length).toBeGreaterThan(0);
    expect(parked.at(-1)?.[0]).toMatchObject({ kind: "approval", name: "issue" });
    expect(new Set(parked.map((w) => JSON.stringify(w))).size).toBe(parked.length);

    // Another event (a test delivery) that the execution filter must leave out.
    const subscriptions = await call("admin", "GET", "/v1/webhooks/subscriptions");
    const test = await call("admin", "POST", `/v1/webhooks/subscriptions/${subscriptions.items[0].id}/test`);
    expect(test.httpStatus).toBe(202);
    const byExecution = await call("admin", "GET", `/v1/webhooks/deliveries?executionId=${id}`);
    expect(byExecution.httpStatus).toBe(200);
    expect(byExecution.items.length).toBe(parked.length);
    for (const d of byExecution.items) expect(d.executionId).toBe(id);
    const firstEvent = waits()[0]?.eventId;
    const byEvent = await call("admin", "GET", `/v1/webhooks/deliveries?eventId=${firstEvent}`);
    expect(byEvent.items.map((d: Body) => d.eventId)).toEqual([firstEvent]);
    await eventually("the first event settled", async () => {
      const [delivery] = (await call("admin", "GET", `/v1/webhooks/deliveries?eventId=${firstEvent}`)).items;
      return delivery.status === "delivered" && typeof delivery.eventSettledAt === "string";
    });
    const bad = await call("admin", "GET", "/v1/webhooks/deliveries?executionId=nope");
    expect(bad.httpStatus).toBe(400);
    expect(bad.errors[0].pointer).toBe("query.executionId");
  });

  it("a failed run is logged at info with its code, workflow and id; the runner said tracing is off", async () => {
    const started = await call("integrator", "POST", "/v1/workflows/demo.asset-issue/executions", {
      symbol: "RCVF",
      approvalTimeout: "10ms",
    });
    const id: string = started.id;
    await eventually(
      "the run failed",
      async () => (await call("integrator", "GET", `/v1/executions/${id}`)).status === "failed",
    );
    const lines = () =>
      runner
        .output()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Body);
    await eventually("the failure's log line", () =>
      lines().some((l) => l.message === "execution failed" && l.executionId === id),
    );
    expect(lines().find((l) => l.message === "execution failed" && l.executionId === id)).toMatchObject({
      level: "info",
      workflow: "demo.asset-issue",
      code: "APPROVAL_EXPIRED",
      class: "business",
    });
    // Counted by bounded class, with zero series for the classes that did not happen.
    const metrics = await (await fetch(`http://127.0.0.1:${env.TENOR_RUNNER_HEALTH_PORT}/metrics`)).text();
    expect(metrics).toContain(
      'tenor_execution_failures_total{workflow="demo.asset-issue",class="business",role="runner"} 1',
    );
    expect(metrics).toContain(
      'tenor_execution_failures_total{workflow="demo.asset-issue",class="cancelled",role="runner"} 0',
    );
    // The run's activity, by its declared name, and its job's wait before a worker took it.
    expect(
      sampleValue(metrics, "tenor_activity_duration_seconds_count", { activity: "demo.deploy-token" }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sampleValue(metrics, "tenor_job_wait_seconds_count", { queue: "activity-deployments" }),
    ).toBeGreaterThanOrEqual(1);
    expect(lines().find((l) => l.message === "tracing off")).toMatchObject({
      tracing: "off",
      reason: expect.stringContaining("no exporter"),
    });
  });

  it("an attempt whose runner was killed reads abandoned, not in flight, and counts toward maxAttempts", async () => {
    const subscription = await subscribe(hanging, ["execution.completed"]);
    const test = await call("admin", "POST", `/v1/webhooks/subscriptions/${subscription}/test`);
    await eventually("the receiver holds the attempt", () => hanging.received.length === 1);
    const inFlight = await call("admin", "GET", `/v1/webhooks/deliveries/${test.deliveryId}`);
    expect(inFlight.receipts).toMatchObject([{ attempt: 1, state: "in_flight", durationMs: null }]);
    expect(inFlight.eventSettledAt).toBeNull();

    runner.kill("SIGKILL");
    await runner.exited;
    // The attempt's lease (timeoutMs + 5 s) ends with nobody to record its outcome.
    await eventually(
      "the attempt reads abandoned",
      async () =>
        (await call("admin", "GET", `/v1/webhooks/deliveries/${test.deliveryId}`)).receipts[0].state ===
        "abandoned",
      10_000,
    );
    runner = spawnRole({ ...env, DAPI_ROLE: "runner" });
    roles.push(runner);
    await eventually(
      "the second attempt dead-letters the delivery",
      async () =>
        (await call("admin", "GET", `/v1/webhooks/deliveries/${test.deliveryId}`)).attempts === 2 &&
        (await call("admin", "GET", `/v1/webhooks/deliveries/${test.deliveryId}`)).finishedAt !== null,
      30_000,
    );
    const dead = await call("admin", "GET", `/v1/webhooks/deliveries/${test.deliveryId}`);
    expect(dead).toMatchObject({ status: "dead", attempts: 2 });
    expect(dead.receipts.map((r: Body) => r.state)).toEqual(["abandoned", "completed"]);
    expect(dead.receipts[0].error).toMatch(/^abandoned/);
    expect(typeof dead.eventSettledAt).toBe("string");
  });
});
