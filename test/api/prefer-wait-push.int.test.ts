import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { finishedChannel } from "../../src/runtime/execution-finished.js";
import { PgExecutionStore } from "../../src/store/pg-execution-store.js";
import { type ApiHarness, startApiHarness } from "./support/api-harness.js";

/**
 * `Prefer: wait` learns of a finished execution from the runner's notification (Redis pub/sub
 * after the terminal commit), and falls back to reading PostgreSQL when a notification is lost.
 */
let api: ApiHarness;
beforeAll(async () => {
  api = await startApiHarness(import.meta.url);
});
afterAll(async () => {
  await api?.stop();
});

const START = "/v1/workflows/apitest.signal/executions";

/** Subscribers of the finished channel: an api replica subscribes on its first wait. */
async function subscribers(): Promise<number> {
  const [, count] = (await api.redis.pubsub("NUMSUB", finishedChannel(api.prefix))) as [string, number];
  return count;
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never saw ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Starts apitest.signal on `app` with `Prefer: wait=3600`, far past the test's timeout: only a
 * finish the wait learns of answers it in time. Resolves with the id once the wait runs.
 */
async function startWaiting(app: ReturnType<ApiHarness["replica"]>) {
  const before = await subscribers();
  const response = request(app)
    .post(START)
    .set("authorization", `Bearer ${api.keys.integrator}`)
    .set("prefer", "wait=3600")
    .send({})
    .then((res) => res);
  // This replica's only request subscribes on its way into the wait: from then on it listens.
  await until(async () => (await subscribers()) > before, "the wait subscribe");
  const { rows } = await api.pool.query<{ id: string }>(
    "SELECT id FROM executions WHERE workflow = 'apitest.signal' ORDER BY created_at DESC LIMIT 1",
  );
  const id = rows[0]?.id as string;
  await api.waitFor(id, (b) => b.status === "waiting", "waiting on the signal");
  return { id, response };
}

describe("Prefer: wait is answered by a push", () => {
  it("answers from the runner's notification, with the fallback read too slow to matter", async () => {
    // A fallback of ten minutes: only the notification can answer before the test times out.
    const app = api.replica({ maxPreferWaitSeconds: 3600, waitFallbackPollMs: 600_000 });
    const { id, response } = await startWaiting(app);
    const signal = await api.as("integrator").post(`/v1/executions/${id}/signals/go`).send({ n: 7 });
    expect(signal.status).toBe(202);
    const res = await response;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, status: "completed", result: { n: 7 } });
  });

  it("answers a replayed start of a finished execution from its first read", async () => {
    const key = `replay-${Date.now()}`;
    const first = await api
      .as("integrator")
      .post("/v1/workflows/apitest.echo/executions")
      .set("idempotency-key", key)
      .set("prefer", "wait=5")
      .send({ text: "again" });
    expect(first.status).toBe(200);
    // A replica that subscribes after that finish was announced: it never heard of it.
    const app = api.replica({ maxPreferWaitSeconds: 3600, waitFallbackPollMs: 600_000 });
    const post = (idempotencyKey?: string) => {
      const req = request(app)
        .post("/v1/workflows/apitest.echo/executions")
        .set("authorization", `Bearer ${api.keys.integrator}`)
        .set("prefer", "wait=3600");
      return (idempotencyKey ? req.set("idempotency-key", idempotencyKey) : req).send({ text: "again" });
    };
    // Its subscription is live from here on, so a start it creates would skip its first read.
    expect((await post()).status).toBe(200);
    // The replay created nothing and its announcement is long past: only a first read answers it
    // before the test times out.
    const replay = await post(key);
    expect(replay.status).toBe(200);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.body).toMatchObject({ id: first.body.id, status: "completed" });
  });

  it("recovers a lost notification by the fallback read", async () => {
    const app = api.replica({ maxPreferWaitSeconds: 3600, waitFallbackPollMs: 200 });
    const { id, response } = await startWaiting(app);
    // Finished by a turn that announces nothing: the commit happens, the notification is lost.
    const store = new PgExecutionStore(api.pool);
    const start = await store.beginTurn(id);
    if (!start) throw new Error("execution vanished");
    await store.complete(start.fence, { n: null });
    const res = await response;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, status: "completed", result: { n: null } });
  });
});
