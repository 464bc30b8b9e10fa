import { Queue } from "bullmq";
import fc from "fast-check";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { roleMay } from "../../src/api/auth/permissions.js";
import { runKeysCommand } from "../../src/cli/keys-command.js";
import { keysCommandStores } from "../support/api-client.js";
import { eventually } from "../support/role-process.js";
import { type ApiHarness, type PrincipalName, startApiHarness } from "./support/api-harness.js";
import { DECLARED_ROUTES } from "./support/declared-routes.js";

let api: ApiHarness;
beforeAll(async () => {
  api = await startApiHarness(import.meta.url);
});
afterAll(async () => {
  await api?.stop();
});

const PROBLEM = /application\/problem\+json/;

async function startApproval(by: PrincipalName, workflow = "apitest.approve", quorum = 1) {
  const body = workflow === "apitest.approve" ? { amount: "10", quorum } : { amount: "10" };
  const res = await api.as(by).post(`/v1/workflows/${workflow}/executions`).send(body);
  expect(res.status).toBe(202);
  return res.body.id as string;
}

/** The execution (the root or its child) waiting for approval `release`, with its params hash. */
async function pendingApproval(rootId: string): Promise<{ id: string; paramsHash: string }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { rows } = await api.pool.query(
      `SELECT id, waiting_for FROM executions WHERE (id = $1 OR parent_id = $1) AND status = 'waiting'`,
      [rootId],
    );
    for (const row of rows) {
      const wait = (row.waiting_for ?? []).find((w: { kind: string }) => w.kind === "approval");
      if (wait) return { id: row.id, paramsHash: wait.details.paramsHash };
    }
    if (Date.now() > deadline) throw new Error(`no approval pending under ${rootId}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const vote = (who: PrincipalName, id: string, paramsHash: string, decision = "approve") =>
  api.as(who).post(`/v1/executions/${id}/approvals/release`).send({ decision, paramsHash });

/** Path parameters of the declared routes, for calls that the role check refuses before reading them. */
const PATH_VALUES: Record<string, string> = { name: "release", chainId: "1" };

describe("platform keys and organisation keys are apart", () => {
  it("platform keys get 403 on every organisation route, and a read-only platform status without execution ids", async () => {
    const id = await startApproval("integrator");
    for (const who of ["platformOperator", "platformAdmin"] as const) {
      const as = api.as(who);
      const refused: request.Response[] = [];
      for (const route of DECLARED_ROUTES.filter(
        (r) => !roleMay(who === "platformAdmin" ? "platform-admin" : "platform-operator", r.permission),
      )) {
        const path = route.path.replaceAll(
          /\{(\w+)\}/g,
          (_m, param: string) => PATH_VALUES[param] ?? (param === "id" ? id : "x"),
        );
        const call = request(api.app)[route.method](path).set("authorization", `Bearer ${api.keys[who]}`);
        refused.push(route.method === "post" ? await call.send({}) : await call);
      }
      expect(refused.length).toBeGreaterThan(20);
      for (const res of refused) {
        expect(res.status).toBe(403);
        expect(res.headers["content-type"]).toMatch(PROBLEM);
        expect(res.body.code).toBe("FORBIDDEN");
      }
      const status = await as.get("/v1/platform/status");
      expect(status.status).toBe(200);
      expect(status.body.totals.waiting ?? 0).toBeGreaterThanOrEqual(1);
      expect(status.body.noMutation.executions).toEqual([]);
      expect(JSON.stringify(status.body)).not.toContain(id);
    }
    const { rows } = await api.pool.query(
      "SELECT count(*)::int AS n FROM executions WHERE created_by = ANY($1)",
      [[api.keyIds.platformOperator, api.keyIds.platformAdmin]],
    );
    expect(rows[0].n).toBe(0);
  });

  it("organisation keys of every role get 403 on Bull Board; no key is 401, a browser is sent to sign in", async () => {
    for (const who of ["integrator", "approver", "operator", "admin", "otherAdmin"] as const) {
      for (const res of [
        await api.as(who).get("/admin/queues"),
        await api.as(who).get("/admin/queues/api/queues"),
        await api.as(who).put("/admin/queues/api/queues/pause"),
      ]) {
        expect(res.status).toBe(403);
        expect(res.headers["content-type"]).toMatch(PROBLEM);
        expect(res.body.code).toBe("FORBIDDEN");
      }
    }
    const anonymous = await request(api.app).get("/admin/queues/api/queues");
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers["content-type"]).toMatch(PROBLEM);
    const browser = await request(api.app).get("/admin/queues").set("accept", "text/html");
    expect(browser.status).toBe(303);
    expect(browser.headers.location).toBe("/admin/sign-in");
  });
});

describe("Bull Board", () => {
  it("shows every Tenor queue: executions, schedules and each activity queue", async () => {
    const activity = new Queue("activity-payments", { connection: api.redis, prefix: api.prefix });
    const job = await activity.add("charge", {
      executionId: "x",
      apiKey: "tnr_secret_value_here",
      note: "called postgres://svc:S3cretPw@db/tenor with Bearer tnr_anotherSecretKey",
    });
    try {
      const deadline = Date.now() + 15_000;
      let names: string[] = [];
      while (Date.now() < deadline) {
        const res = await api.as("platformAdmin").get("/admin/queues/api/queues");
        names = res.body.queues.map((q: { name: string }) => q.name);
        if (names.includes("activity-payments")) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(names).toEqual(expect.arrayContaining(["executions", "schedules", "activity-payments"]));
      const shown = await api.as("platformAdmin").get(`/admin/queues/api/queues/activity-payments/${job.id}`);
      expect(shown.status).toBe(200);
      expect(shown.text).toContain("[redacted]");
      for (const secret of ["tnr_secret_value_here", "S3cretPw", "tnr_anotherSecretKey"]) {
        expect(shown.text).not.toContain(secret);
      }
    } finally {
      await activity.obliterate({ force: true });
      await activity.close();
    }
  });

  it("platform-admin may change queues; a platform-operator's changes are 403 problem+json before Bull Board", async () => {
    const full = await api.as("platformAdmin").get("/admin/queues/api/queues");
    expect(full.body.queues.find((q: { name: string }) => q.name === "executions")).toMatchObject({
      readOnlyMode: false,
    });
    const readOnly = await api.as("platformOperator").get("/admin/queues/api/queues");
    expect(readOnly.body.queues.find((q: { name: string }) => q.name === "executions")).toMatchObject({
      readOnlyMode: true,
      allowRetries: false,
    });
    const attempts = [
      api.as("platformOperator").put("/admin/queues/api/queues/pause"),
      api.as("platformOperator").put("/admin/queues/api/queues/executions/pause"),
      api.as("platformOperator").put("/admin/queues/api/queues/executions/clean/completed"),
      api
        .as("platformOperator")
        .post("/admin/queues/api/queues/executions/add")
        .send({ name: "x", data: {} }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(403);
      expect(res.headers["content-type"]).toMatch(PROBLEM);
      expect(res.body.code).toBe("QUEUES_READ_ONLY");
    }
    const executions = new Queue("executions", { connection: api.redis, prefix: api.prefix });
    try {
      expect(await executions.isPaused()).toBe(false);
      const pause = await api.as("platformAdmin").put("/admin/queues/api/queues/schedules/pause");
      expect(pause.status).toBe(200);
      const schedules = new Queue("schedules", { connection: api.redis, prefix: api.prefix });
      expect(await schedules.isPaused()).toBe(true);
      await schedules.resume();
      await schedules.close();
      // Both the change and the refused attempts are in the audit trail, under no organisation.
      await eventually("queue changes audited", async () => {
        const { rows } = await api.pool.query(
          "SELECT role, outcome, target FROM audit_events WHERE action = 'queue.change' AND org_id IS NULL",
        );
        return (
          rows.some(
            (r) =>
              r.role === "platform-admin" && r.outcome === "accepted" && r.target.includes("schedules/pause"),
          ) &&
          rows.filter((r) => r.role === "platform-operator" && r.outcome === "QUEUES_READ_ONLY").length >= 4
        );
      });
    } finally {
      await executions.close();
    }
  });

  it("signs a person in with a platform key: HttpOnly SameSite=Strict session, CSRF on changes, sign-out, revocation", async () => {
    const origin = "http://tenor.test";
    const refused = await request(api.app)
      .post("/admin/sign-in")
      .set("host", "tenor.test")
      .set("origin", origin)
      .type("form")
      .send({ key: api.keys.admin });
    expect(refused.status).toBe(401);
    expect(refused.headers["set-cookie"]).toBeUndefined();

    const crossSite = await request(api.app)
      .post("/admin/sign-in")
      .set("host", "tenor.test")
      .set("origin", "http://evil.test")
      .type("form")
      .send({ key: api.keys.platformOperator });
    expect(crossSite.status).toBe(403);

    const issued = await issueKeyViaCli([
      "--platform",
      "--role",
      "platform-operator",
      "--subject",
      "ops@tenor",
    ]);
    const signIn = await request(api.app)
      .post("/admin/sign-in")
      .set("host", "tenor.test")
      .set("origin", origin)
      .set("x-forwarded-proto", "https")
      .type("form")
      .send({ key: issued.key });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.location).toBe("/admin/queues");
    const setCookie = String(signIn.headers["set-cookie"]);
    expect(setCookie).toMatch(/tenor_board=[A-Za-z0-9_-]{40,}/);
    for (const attribute of ["HttpOnly", "SameSite=Strict", "Secure", "Path=/admin", "Max-Age=28800"]) {
      expect(setCookie).toContain(attribute);
    }
    const cookie = setCookie.split(";")[0] as string;
    const queues = await request(api.app).get("/admin/queues/api/queues").set("cookie", cookie);
    expect(queues.status).toBe(200);
    // A change without same-origin proof is refused before the role check.
    const noOrigin = await request(api.app).put("/admin/queues/api/queues/pause").set("cookie", cookie);
    expect(noOrigin.status).toBe(403);
    expect(noOrigin.body.code).toBe("CSRF_REJECTED");
    const sameSite = await request(api.app)
      .put("/admin/queues/api/queues/pause")
      .set("cookie", cookie)
      .set("sec-fetch-site", "same-origin");
    expect(sameSite.body.code).toBe("QUEUES_READ_ONLY");

    // Sign-out needs the session's CSRF token from the sign-out page.
    const signOutPage = await request(api.app).get("/admin/sign-out").set("cookie", cookie);
    const csrf = /name="csrf" value="([^"]+)"/.exec(signOutPage.text)?.[1];
    expect(csrf).toBeTruthy();
    const forged = await request(api.app)
      .post("/admin/sign-out")
      .set("host", "tenor.test")
      .set("origin", origin)
      .set("cookie", cookie)
      .type("form")
      .send({ csrf: "forged" });
    expect(forged.status).toBe(403);
    expect((await request(api.app).get("/admin/queues/api/queues").set("cookie", cookie)).status).toBe(200);

    // Revoking the key ends the session at its next request.
    await runKeysCommand(["revoke", issued.id], keysCommandStores(api.pool), {
      stdout: () => {},
      stderr: () => {},
    });
    const afterRevoke = await request(api.app).get("/admin/queues/api/queues").set("cookie", cookie);
    expect(afterRevoke.status).toBe(401);
    expect(afterRevoke.headers["content-type"]).toMatch(PROBLEM);
    const keysLeft = await api.redis.keys(`${api.prefix}:board-session:*`);
    expect(keysLeft).toEqual([]);
  });
});

async function issueKeyViaCli(args: string[]): Promise<{ key: string; id: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runKeysCommand(["create", ...args], keysCommandStores(api.pool), {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
  });
  expect(code).toBe(0);
  const id = /Issued key ([0-9a-f-]{36})/.exec(stderr)?.[1] as string;
  return { key: stdout.trim(), id };
}

describe("approvals are bound to people", () => {
  it("two keys of one subject count once: the second vote is a duplicate, the quorum waits for another person", async () => {
    const id = await startApproval("integrator", "apitest.approve", 2);
    const { paramsHash } = await pendingApproval(id);
    expect((await vote("approver", id, paramsHash)).status).toBe(202);
    const again = await vote("approverAlias", id, paramsHash);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("APPROVAL_DUPLICATE_VOTE");
    const second = await vote("approver2", id, paramsHash);
    expect(second.body).toMatchObject({ approvals: 2, outcome: "approved" });
    const votes = await api.as("operator").get(`/v1/executions/${id}/approvals`);
    expect(votes.body.votes.map((v: { approver: { subject: string } }) => v.approver.subject)).toEqual([
      "approver",
      "approver2",
    ]);
  });

  it("the initiator may not approve with another of their keys", async () => {
    const id = await startApproval("integrator");
    const { paramsHash } = await pendingApproval(id);
    const res = await vote("integratorAsApprover", id, paramsHash);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("SELF_APPROVAL_FORBIDDEN");
  });

  it("a child inherits its root's initiator: the admin who started the root may not approve inside the child", async () => {
    const rootId = await startApproval("admin", "apitest.approve-parent");
    const child = await pendingApproval(rootId);
    expect(child.id).not.toBe(rootId);
    const res = await vote("admin", child.id, child.paramsHash);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("SELF_APPROVAL_FORBIDDEN");
    const { rows } = await api.pool.query("SELECT created_by FROM executions WHERE id = $1", [child.id]);
    expect(rows[0].created_by).toBe(api.keyIds.admin);
  });
});

describe("audit trail", () => {
  it("records votes, signals, cancels and key changes, accepted or refused, for the organisation's operator", async () => {
    const id = await startApproval("integrator");
    const { paramsHash } = await pendingApproval(id);
    const requestId = `req-${Date.now()}`;
    await vote("integratorAsApprover", id, paramsHash).set("x-request-id", requestId);
    await api
      .as("integrator")
      .post(`/v1/executions/${id}/approvals/release`)
      .send({ decision: "approve", paramsHash });
    await api.as("integrator").post(`/v1/executions/${id}/signals/poke`).send({});
    await api.as("operator").post(`/v1/executions/${id}/cancel`);
    const issued = await issueKeyViaCli(["--org", "org-a", "--role", "approver", "--subject", "carol@acme"]);
    await runKeysCommand(["revoke", issued.id], keysCommandStores(api.pool), {
      stdout: () => {},
      stderr: () => {},
    });

    const events = async (query: Record<string, string>) => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const res = await api.as("operator").get("/v1/audit").query(query);
        expect(res.status).toBe(200);
        if (res.body.items.length > 0 || Date.now() > deadline) return res.body;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const selfVote = await events({ action: "approval.vote", actorKeyId: api.keyIds.integratorAsApprover });
    expect(selfVote.items[0]).toMatchObject({
      actorKeyId: api.keyIds.integratorAsApprover,
      subject: "integrator",
      orgId: "org-a",
      role: "approver",
      target: `${id}/approvals/release`,
      requestId,
      outcome: "SELF_APPROVAL_FORBIDDEN",
    });
    const roleRefused = (await events({ action: "approval.vote", actorKeyId: api.keyIds.integrator }))
      .items[0];
    expect(roleRefused).toMatchObject({ role: "integrator", outcome: "FORBIDDEN" });
    expect(
      (await events({ action: "execution.signal", target: `${id}/signals/poke` })).items[0],
    ).toMatchObject({
      outcome: "accepted",
    });
    expect((await events({ action: "execution.cancel", target: id })).items[0]).toMatchObject({
      subject: "operator",
      outcome: "accepted",
    });
    expect((await events({ action: "key.issue", target: issued.id })).items[0]).toMatchObject({
      actorKeyId: null,
      subject: "cli",
      role: "approver",
    });
    expect((await events({ action: "key.revoke", target: issued.id })).items).toHaveLength(1);

    // Cursor paging walks everything once, newest first.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: Record<string, string> = { limit: "2" };
      if (cursor) query.cursor = cursor;
      const page = await api.as("operator").get("/v1/audit").query(query);
      seen.push(...page.body.items.map((e: { id: string }) => e.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen.length).toBeGreaterThanOrEqual(6);
    expect([...seen].sort((a, b) => Number(b) - Number(a))).toEqual(seen);

    // Another organisation's operator sees none of it; an integrator may not read it.
    const other = await api.as("otherOperator").get("/v1/audit");
    expect(other.body.items.filter((e: { target: string }) => e.target.startsWith(id))).toEqual([]);
    expect((await api.as("integrator").get("/v1/audit")).status).toBe(403);

    // Append-only: UPDATE and DELETE change nothing.
    const before = await api.pool.query("SELECT count(*)::int AS n FROM audit_events");
    await api.pool.query("UPDATE audit_events SET outcome = 'tampered'");
    await api.pool.query("DELETE FROM audit_events");
    const after = await api.pool.query(
      "SELECT count(*)::int AS n, count(*) FILTER (WHERE outcome = 'tampered')::int AS t FROM audit_events",
    );
    expect(after.rows[0]).toEqual({ n: before.rows[0].n, t: 0 });
  });
});

describe("bad query input is a 400 naming the parameter, never a 500", () => {
  const cursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  it.each([
    ["cursor", { cursor: cursor(["1", "00000000-0000-0000-0000-000000000000"]) }],
    ["cursor", { cursor: cursor(["2026-01-01T00:00:00.000Z", "-".repeat(36)]) }],
    ["cursor", { cursor: cursor(["0000-01-01T00:00:00.000Z", "00000000-0000-0000-0000-000000000000"]) }],
    ["createdAfter", { createdAfter: "0000-01-01T00:00:00Z" }],
    ["createdBefore", { createdBefore: "+275760-09-13T00:00:00Z" }],
    ["workflow", { workflow: "a\u0000b" }],
    ["key", { key: "\u0000" }],
  ])("%s: %j", async (parameter, query) => {
    const res = await api.as("operator").get("/v1/executions").query(query);
    expect(res.status).toBe(400);
    expect(res.headers["content-type"]).toMatch(PROBLEM);
    expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(`query.${parameter}`);
  });

  it("audit filters and cursor too", async () => {
    for (const [parameter, query] of [
      ["cursor", { cursor: "zz" }],
      ["actorKeyId", { actorKeyId: "-".repeat(36) }],
      ["subject", { subject: "\u0000" }],
      ["action", { action: "drop" }],
    ] as const) {
      const res = await api.as("operator").get("/v1/audit").query(query);
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(`query.${parameter}`);
    }
  });
});

describe("rate limits", () => {
  it("counts per key in Redis, shared by replicas: over budget is 429 problem+json with Retry-After", async () => {
    const settings = { rateLimit: { max: 3, windowSeconds: 60 } };
    const one = api.replica(settings);
    const two = api.replica(settings);
    const get = (app: typeof one, key: string) =>
      request(app).get("/v1/platform/status").set("authorization", `Bearer ${key}`);
    // Fresh keys: the budget is per key across replicas, and the shared ones were spent above.
    const first = await issueKeyViaCli(["--org", "org-a", "--role", "operator", "--subject", "dora@acme"]);
    const second = await issueKeyViaCli(["--org", "org-a", "--role", "operator", "--subject", "eve@acme"]);
    const key = first.key;
    const statuses = [];
    for (const app of [one, two, one]) statuses.push((await get(app, key)).status);
    expect(statuses).toEqual([200, 200, 200]);
    const limited = await get(two, key);
    expect(limited.status).toBe(429);
    expect(limited.headers["content-type"]).toMatch(PROBLEM);
    expect(limited.body.code).toBe("RATE_LIMITED");
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers["retry-after"])).toBeLessThanOrEqual(60);
    // Another key has its own budget.
    expect((await get(one, second.key)).status).toBe(200);
    const stored = await api.redis.keys(`${api.prefix}:rate-limit:*`);
    expect(stored.length).toBeGreaterThanOrEqual(2);
    expect(stored.join(" ")).not.toContain(key);
  });
});

describe("keys command", () => {
  const run = async (args: string[]) => {
    let err = "";
    try {
      const code = await runKeysCommand(args, keysCommandStores(api.pool), {
        stdout: () => {},
        stderr: (t) => {
          err += t;
        },
      });
      return { code, err };
    } catch (error) {
      return { code: 2, err: (error as Error).message };
    }
  };
  it("requires a subject, keeps platform roles out of organisations and organisation roles out of the platform", async () => {
    expect((await run(["create", "--org", "org-a", "--role", "approver"])).err).toContain(
      "--subject is required",
    );
    expect(
      (await run(["create", "--platform", "--org", "org-a", "--role", "platform-admin", "--subject", "x"]))
        .err,
    ).toContain("drop --org");
    expect((await run(["create", "--platform", "--role", "admin", "--subject", "x"])).err).toContain(
      "platform-operator",
    );
    expect(
      (await run(["create", "--org", "org-a", "--role", "platform-admin", "--subject", "x"])).err,
    ).toContain("--role is required");
    const ok = await run(["create", "--platform", "--role", "platform-admin", "--subject", "root@tenor"]);
    expect(ok.code).toBe(0);
    expect(ok.err).toContain("to root@tenor for the platform, role platform-admin");
  });
});

describe("fuzzing every route", () => {
  it("never answers 5xx, always problem+json on 4xx, and a refused request creates no execution", async () => {
    const known = await startApproval("integrator");
    const segment = fc.oneof(
      fc.constant(known),
      fc.uuid(),
      fc.string({ maxLength: 40 }),
      fc.constantFrom(
        "apitest.echo",
        "apitest.approve",
        "release",
        "$reserved",
        "..",
        "%",
        "%E0%A4%A",
        "%00",
        "a%2Fb",
      ),
    );
    const raw = (s: string) =>
      /^[A-Za-z0-9._~$-]*$/.test(s) || s.startsWith("%") ? s : encodeURIComponent(s);
    const queryValue = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.constantFrom(
        "0000-01-01T00:00:00Z",
        "9999-12-31T23:59:59Z",
        "-000001-01-01T00:00:00Z",
        "2026-02-30T00:00:00Z",
        "1e309",
        "-1",
        "\u0000",
        Buffer.from(JSON.stringify(["1", "-".repeat(36)])).toString("base64url"),
        Buffer.from(JSON.stringify([null, null])).toString("base64url"),
      ),
      fc.integer().map(String),
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    );
    const query = fc.dictionary(
      fc.constantFrom(
        "workflow",
        "status",
        "key",
        "idempotencyKey",
        "createdAfter",
        "createdBefore",
        "limit",
        "cursor",
        "action",
        "subject",
        "actorKeyId",
        "target",
        "x",
      ),
      fc.oneof(queryValue, fc.array(queryValue, { minLength: 2, maxLength: 2 })),
      { maxKeys: 4 },
    );
    const body = fc.oneof(
      fc.json().map((text) => ({ text, type: "application/json" })),
      fc.string({ maxLength: 50 }).map((text) => ({ text, type: "application/json" })),
      fc.string({ maxLength: 50 }).map((text) => ({ text, type: "text/plain" })),
      fc
        .record({ decision: fc.constantFrom("approve", "reject", "maybe"), paramsHash: fc.string() })
        .map((v) => ({
          text: JSON.stringify(v),
          type: "application/json",
        })),
      fc.record({ text: fc.string(), amount: fc.string(), quorum: fc.integer() }).map((v) => ({
        text: JSON.stringify(v),
        type: "application/json",
      })),
    );
    const route = fc.oneof(
      segment.map((name) => ({ method: "post" as const, path: `/v1/workflows/${raw(name)}/executions` })),
      fc.constant({ method: "get" as const, path: "/v1/executions" }),
      segment.map((id) => ({ method: "get" as const, path: `/v1/executions/${raw(id)}` })),
      segment.map((id) => ({ method: "get" as const, path: `/v1/executions/${raw(id)}/steps` })),
      segment.map((id) => ({ method: "get" as const, path: `/v1/executions/${raw(id)}/approvals` })),
      fc.tuple(segment, segment).map(([id, name]) => ({
        method: "post" as const,
        path: `/v1/executions/${raw(id)}/signals/${raw(name)}`,
      })),
      fc.tuple(segment, segment).map(([id, name]) => ({
        method: "post" as const,
        path: `/v1/executions/${raw(id)}/approvals/${raw(name)}`,
      })),
      segment.map((id) => ({ method: "post" as const, path: `/v1/executions/${raw(id)}/cancel` })),
      fc.constant({ method: "get" as const, path: "/v1/platform/status" }),
      fc.constant({ method: "get" as const, path: "/v1/audit" }),
      segment.map((s) => ({ method: "get" as const, path: `/v1/${raw(s)}` })),
    );
    const who = fc.constantFrom<PrincipalName | null>(
      "admin",
      "integrator",
      "approver",
      "operator",
      "platformAdmin",
      null,
    );
    const count = async () =>
      (await api.pool.query("SELECT count(*)::int AS n FROM executions WHERE parent_id IS NULL")).rows[0]
        .n as number;
    const before = await count();
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(route, query, body, who, async (r, q, b, principal) => {
        let call = request(api.app)[r.method](r.path).query(q);
        if (principal) call = call.set("authorization", `Bearer ${api.keys[principal]}`);
        const res = r.method === "post" ? await call.set("content-type", b.type).send(b.text) : await call;
        const where = `${r.method.toUpperCase()} ${r.path} ${JSON.stringify(q)} as ${principal}: ${res.status} ${res.text.slice(0, 200)}`;
        expect(res.status, where).toBeLessThan(500);
        if (res.status >= 400) expect(res.headers["content-type"], where).toMatch(PROBLEM);
        if (r.path.startsWith("/v1/workflows/") && res.status >= 200 && res.status < 300) accepted += 1;
      }),
      { numRuns: 300 },
    );
    expect(await count()).toBe(before + accepted);
  });
});
