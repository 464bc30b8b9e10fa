import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { entryCommand } from "../support/fast-entry.js";
import { freePort, spawnProcess } from "../support/processes.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";
import { eventually, type RoleProcess, spawnRole } from "../support/role-process.js";

/**
 * The real api and runner roles (workers/main.ts) with the release's workflows, and the approval
 * demo (scripts/demo-approval.ts) going through the HTTP API against them.
 */
let db: TestDatabase;
let env: Record<string, string>;
const prefix = testRedisPrefix(import.meta.url);
const roles: RoleProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  env = {
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl(),
    TENOR_REDIS_PREFIX: prefix,
    TENOR_API_PORT: String(await freePort()),
    TENOR_RUNNER_HEALTH_PORT: String(await freePort()),
    TENOR_LOG_LEVEL: "debug",
  };
  roles.push(spawnRole({ ...env, DAPI_ROLE: "api" }), spawnRole({ ...env, DAPI_ROLE: "runner" }));
  await eventually(
    "api ready",
    async () => (await fetch(`http://127.0.0.1:${env.TENOR_API_PORT}/readyz`)).ok,
  );
  await eventually(
    "runner ready",
    async () => (await fetch(`http://127.0.0.1:${env.TENOR_RUNNER_HEALTH_PORT}/readyz`)).ok,
  );
});

afterAll(async () => {
  for (const role of roles) role.kill("SIGKILL");
  await Promise.all(roles.map((r) => r.exited));
  await deleteRedisPrefix(prefix).catch(() => undefined);
  await db?.drop();
});

describe("api role", () => {
  it("runs the approval demo through the HTTP API: start, approval by another identity, journal", async () => {
    const demo = spawnProcess(
      "demo-approval",
      ...entryCommand("scripts/demo-approval.ts", ["--symbol", "APIT"]),
      { env, settleOn: "close" },
    );
    const { code } = await demo.exit;
    const out = demo.output();
    expect(code, out).toBe(0);
    expect(out).toMatch(
      /execution [0-9a-f-]{36} \(demo\.asset-issue, symbol APIT\) — 202 \/v1\/executions\//,
    );
    expect(out).toContain("waiting for approval:issue");
    expect(out).toContain("approval: approve by demo-approver (1/1, approved)");
    expect(out).toContain("status: completed");
    expect(out).toMatch(/#2 approval +issue +ok/);
  });

  it("answers problem+json for unknown routes and 401 without a key; logs neither keys nor payloads", async () => {
    const base = `http://127.0.0.1:${env.TENOR_API_PORT}`;
    const res = await fetch(`${base}/v1/executions`, {
      headers: { authorization: "Bearer tnr_secret-looking-key" },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    const api = roles[0] as RoleProcess;
    await eventually("request logged", () => api.output().includes('"status":401'));
    expect(api.output()).not.toContain("tnr_secret-looking-key");
    expect(api.output()).not.toContain("APIT");
  });
});
