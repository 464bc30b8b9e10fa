import { randomUUID } from "node:crypto";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NonDeterminismError, toFailureRecord } from "../../src/engine/errors.js";
import { requestCancellation } from "../../src/store/pg-cancellation.js";
import { PgExecutionStore } from "../../src/store/pg-execution-store.js";
import { executionJobId, QUEUE_NAMES } from "../../src/transport/queue-names.js";
import { type ApiHarness, startApiHarness } from "./support/api-harness.js";

/**
 * The operator's words on the API (docs/console.md): a hold names the journal position that does
 * not replay and the commands that end it; `held` and failure codes are list filters; a cancel
 * keeps who asked and why with the failure; a parked job's own fields say its wake time, the
 * instant Bull Board shows.
 */
let api: ApiHarness;
beforeAll(async () => {
  api = await startApiHarness(import.meta.url);
});
afterAll(async () => {
  await api?.stop();
});

const start = (workflow: string) => `/v1/workflows/${workflow}/executions`;

/**
 * An execution held for non-determinism at position 3, as a runner leaves it: suspended with the
 * hold and its `fix` wait. No job is queued and its retry is an hour away, so nothing moves it.
 */
async function heldForNonDeterminism(): Promise<string> {
  const store = new PgExecutionStore(api.pool);
  const { summary } = await store.createExecution({
    id: randomUUID(),
    workflow: "apitest.echo",
    workflowVersion: 1,
    orgId: "org-a",
    input: { text: "held" },
    key: null,
    idempotencyKey: null,
    requestHash: null,
    parentId: null,
    parentPosition: null,
  });
  const turn = await store.beginTurn(summary.id);
  if (!turn) throw new Error("no turn");
  const error = new NonDeterminismError(
    3,
    { kind: "step", name: "token.deploy" },
    { kind: "step", name: "token.mint" },
  );
  await store.hold(turn.fence, toFailureRecord(error, "NON_DETERMINISM"), new Date(Date.now() + 3_600_000));
  return summary.id;
}

describe("a held execution", () => {
  it("says which position does not replay and which commands end the hold; its wait reads in words", async () => {
    const id = await heldForNonDeterminism();
    const { body } = await api.as("operator").get(`/v1/executions/${id}`);
    expect(body.status).toBe("suspended");
    expect(body.hold.code).toBe("NON_DETERMINISM");
    expect(body.hold.guidance).toContain("journal position 3");
    expect(body.hold.guidance).toContain("tenor compat --against");
    expect(body.hold.guidance).toContain(`tenor runs resume ${id}`);
    expect(body.hold.guidance).toContain(`POST /v1/executions/${id}/resume`);
    expect(body.hold.guidance).not.toContain("start again");
    // The code stays the wait's name; the words come beside it.
    expect(body.waitingFor).toEqual([
      expect.objectContaining({
        kind: "fix",
        name: "NON_DETERMINISM",
        summary: "a deploy of code that replays journal position 3",
      }),
    ]);
  });
});

describe("GET /v1/executions filters", () => {
  it("status=held lists suspended executions with a hold, and code= their hold or failure code", async () => {
    const held = await heldForNonDeterminism();
    const waiting = (await api.as("integrator").post(start("apitest.signal")).send({})).body.id as string;
    await api.waitFor(waiting, (b) => b.status === "waiting", "waiting");
    const ids = async (query: string) => {
      const res = await api.as("operator").get(`/v1/executions?${query}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.items.map((e: { id: string }) => e.id) as string[];
    };
    expect(await ids("status=held")).toContain(held);
    expect(await ids("status=held")).not.toContain(waiting);
    expect(await ids("status=suspended")).toContain(held);
    expect(await ids("status=held,waiting")).toEqual(expect.arrayContaining([held, waiting]));
    expect(await ids("code=NON_DETERMINISM")).toContain(held);
    expect(await ids("status=held&code=NON_DETERMINISM")).toContain(held);
    expect(await ids("code=CANCELLED")).not.toContain(held);
  });

  it("refuses an unknown status or a malformed code with 400 naming the field, the value and the rule", async () => {
    const status = await api.as("operator").get("/v1/executions?status=waiting,sleeping");
    expect(status.status).toBe(400);
    expect(status.body.code).toBe("REQUEST_INVALID");
    expect(status.body.errors).toEqual([
      {
        pointer: "query.status",
        message:
          'must be one or more of running, waiting, suspended, completed, failed, held, comma-separated (got "sleeping")',
      },
    ]);
    const code = await api.as("operator").get("/v1/executions?code=cancelled");
    expect(code.status).toBe(400);
    expect(code.body.errors).toEqual([
      {
        pointer: "query.code",
        message:
          'must be a stable error code: 1–64 of A–Z, 0–9 and _, starting with a letter (got "cancelled")',
      },
    ]);
  });
});

describe("cancel with who and why", () => {
  it("keeps the key and the reason with the failure; code=CANCELLED pages through cancelled runs", async () => {
    const operator = (
      await api.pool.query<{ name: string; subject: string }>(
        "SELECT name, subject FROM api_keys WHERE id = $1",
        [api.keyIds.operator],
      )
    ).rows[0] as { name: string; subject: string };
    const cancelled: string[] = [];
    for (const reason of ["wrong recipient", "duplicate of another run", "asked by the issuer"]) {
      const { body } = await api.as("integrator").post(start("apitest.signal")).send({});
      await api.waitFor(body.id, (b) => b.status === "waiting", "waiting");
      const res = await api.as("operator").post(`/v1/executions/${body.id}/cancel`).send({ reason });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      expect(res.body.cancellation).toEqual({
        requestedAt: res.body.cancelRequestedAt,
        by: { keyId: api.keyIds.operator, name: operator.name, subject: operator.subject, role: "operator" },
        reason,
      });
      cancelled.push(body.id);
    }
    const first = cancelled[0] as string;
    const done = await api.waitFor(first, (b) => b.status === "failed", "failed");
    expect(done.failure).toMatchObject({
      code: "CANCELLED",
      details: {
        requestedBy: { keyId: api.keyIds.operator, subject: operator.subject, name: operator.name },
        reason: "wrong recipient",
      },
    });
    const failure = done.failure as { message: string; guidance: string };
    expect(failure.message).toContain(`by ${operator.subject} (key ${operator.name})`);
    expect(failure.message).toContain(": wrong recipient");
    expect(failure.guidance).toContain(`by ${operator.subject}`);
    expect(done.cancellation).toMatchObject({ by: { subject: operator.subject }, reason: "wrong recipient" });
    const audit = await api.pool.query(
      "SELECT subject, outcome FROM audit_events WHERE action = 'execution.cancel' AND target = $1 ORDER BY id",
      [first],
    );
    expect(audit.rows[0]).toEqual({ subject: operator.subject, outcome: "accepted" });

    for (const id of cancelled) await api.waitFor(id, (b) => b.status === "failed", "failed");
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: {
        status: number;
        body: { items: { id: string; failure: { code: string } }[]; nextCursor: string | null };
      } = await api
        .as("operator")
        .get(`/v1/executions?status=failed&code=CANCELLED&limit=1${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(1);
      for (const item of page.body.items) {
        expect(item.failure.code).toBe("CANCELLED");
        seen.push(item.id);
      }
      cursor = page.body.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual([...cancelled].reverse());
  });

  it("a repeated cancel keeps the first request's time, key and reason", async () => {
    // The store's request alone, without the wake: the run stays unfinished while both requests land.
    const id = await heldForNonDeterminism();
    const by = (name: string) => ({ keyId: randomUUID(), name, subject: `${name}@acme`, role: "operator" });
    const first = await requestCancellation(api.pool, "org-a", id, {
      by: by("first"),
      reason: "wrong recipient",
    });
    const second = await requestCancellation(api.pool, "org-a", id, { by: by("second"), reason: "another" });
    expect(second?.cancelRequestedAt).toBe(first?.cancelRequestedAt);
    const { body } = await api.as("operator").get(`/v1/executions/${id}`);
    expect(body.cancellation).toMatchObject({
      requestedAt: first?.cancelRequestedAt,
      by: { name: "first", subject: "first@acme" },
      reason: "wrong recipient",
    });
  });

  it("refuses a reason that is empty, too long or not storable, naming the field", async () => {
    const { body } = await api.as("integrator").post(start("apitest.signal")).send({});
    for (const reason of ["", "x".repeat(2001), "nul \u0000 inside"]) {
      const res = await api.as("operator").post(`/v1/executions/${body.id}/cancel`).send({ reason });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(JSON.stringify(res.body.errors)).toContain("body.reason");
    }
    const unknown = await api.as("operator").post(`/v1/executions/${body.id}/cancel`).send({ why: "x" });
    expect(unknown.status).toBe(400);
    const current = await api.as("operator").get(`/v1/executions/${body.id}`);
    expect(current.body.cancellation).toBeNull();
  });
});

describe("a parked job's due time", () => {
  it("the delayed job's timestamp + delay is the execution's wake time, also when it parks again later", async () => {
    const { body } = await api.as("integrator").post(start("apitest.signal")).send({});
    await api.waitFor(body.id, (b) => b.status === "waiting", "waiting");
    // Another signal wakes it; its turn parks again on the same deadline, long after the job was made.
    await api.as("operator").post(`/v1/executions/${body.id}/signals/other`).send({});
    const queue = new Queue(QUEUE_NAMES.executions, { connection: api.redis, prefix: api.prefix });
    try {
      const turnOf = async () =>
        Number((await api.pool.query("SELECT turn FROM executions WHERE id = $1", [body.id])).rows[0].turn);
      const wakeAtOf = async () =>
        (
          (await api.pool.query("SELECT wake_at FROM executions WHERE id = $1", [body.id])).rows[0]
            .wake_at as Date
        ).getTime();
      // Parked again: a second turn ran and the job is delayed, its fields aligned right after the move.
      const deadline = Date.now() + 20_000;
      let seen = "";
      for (;;) {
        const job = await queue.getJob(executionJobId(body.id));
        const wakeAt = await wakeAtOf();
        const state = await job?.getState();
        seen = `turn ${await turnOf()}, ${state}, timestamp ${job?.timestamp}, delay ${job?.delay}, wake ${wakeAt}`;
        if ((await turnOf()) >= 2 && state === "delayed" && job && job.timestamp + job.delay === wakeAt) {
          expect(job.timestamp).toBeLessThan(wakeAt);
          const score = await api.redis.zscore(
            `${api.prefix}:${QUEUE_NAMES.executions}:delayed`,
            executionJobId(body.id),
          );
          expect(Math.floor(Number(score) / 4096)).toBe(wakeAt);
          break;
        }
        // What Bull Board shows as "will run at" (timestamp + delay) must become the wake time.
        if (Date.now() > deadline) throw new Error(`the delayed job never said its wake time: ${seen}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await queue.close();
    }
  });
});
