import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../../src/api/auth/api-key.js";
import { PgApiKeys } from "../../src/store/pg-api-keys.js";
import { createPgPool } from "../../src/store/pg-pool.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { freePort } from "../support/ports.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";
import { eventually, type RoleProcess, spawnRole } from "../support/role-process.js";

/**
 * Every log line of real role processes (an api and a runner, as deployed), at debug level, while
 * keys are used, refused and sent where they do not belong: neither the database password nor any
 * issued API key may appear. PostgreSQL here trusts local connections, so a password in the URL is
 * accepted and ignored: exactly what a leak would print.
 */
let db: TestDatabase;
const prefix = testRedisPrefix(import.meta.url);
const running: RoleProcess[] = [];
const password = `Pw${randomBytes(12).toString("hex")}`;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  for (const role of running) role.kill("SIGKILL");
  await deleteRedisPrefix(prefix);
  await db.drop();
});

function withPassword(url: string): string {
  const parsed = new URL(url);
  parsed.username = parsed.username || "postgres";
  parsed.password = password;
  return parsed.toString();
}

describe("no secret in any log line", () => {
  it("api and runner processes never print the database password or an API key", async () => {
    const databaseUrl = withPassword(db.url);
    const pool = createPgPool(db.url, { applicationName: "tenor-log-scan", max: 2 });
    const keys = new PgApiKeys(pool);
    const org = await issueApiKey(keys, { orgId: "acme", role: "admin", subject: "alice@acme" });
    const platform = await issueApiKey(keys, { orgId: null, role: "platform-admin", subject: "ops@tenor" });
    await pool.end();
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl(),
      TENOR_REDIS_PREFIX: prefix,
      TENOR_LOG_LEVEL: "debug",
      TENOR_API_PORT: String(await freePort()),
      TENOR_RUNNER_HEALTH_PORT: String(await freePort()),
    };
    const api = spawnRole({ ...env, DAPI_ROLE: "api" });
    const runner = spawnRole({ ...env, DAPI_ROLE: "runner" });
    running.push(api, runner);
    const base = `http://127.0.0.1:${env.TENOR_API_PORT}`;
    await eventually("api ready", async () => (await fetch(`${base}/readyz`)).status === 200, 60_000);
    await eventually(
      "runner ready",
      async () => (await fetch(`http://127.0.0.1:${env.TENOR_RUNNER_HEALTH_PORT}/readyz`)).status === 200,
      60_000,
    );
    await eventually("runner owns shards", () => runner.output().includes("shard ownership started"), 60_000);

    const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
    const secrets = { key: org.key, password, databaseUrl };
    const calls = [
      fetch(`${base}/v1/executions`, { headers: bearer(org.key) }),
      fetch(`${base}/v1/executions?cursor=${org.key}&workflow=${password}`, { headers: bearer(org.key) }),
      fetch(`${base}/v1/workflows/nope/executions`, {
        method: "POST",
        headers: { ...bearer(org.key), "content-type": "application/json" },
        body: JSON.stringify(secrets),
      }),
      fetch(`${base}/v1/executions`, { headers: { authorization: `Basic ${btoa(`x:${org.key}`)}` } }),
      fetch(`${base}/v1/executions`, { headers: bearer(`${org.key}x`) }),
      fetch(`${base}/admin/queues/api/queues`, { headers: bearer(platform.key) }),
      fetch(`${base}/admin/sign-in`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
        body: `key=${platform.key}`,
        redirect: "manual",
      }),
    ];
    const statuses = (await Promise.all(calls)).map((r) => r.status);
    expect(statuses).toEqual([200, 400, 404, 401, 401, 200, 303]);

    api.kill("SIGTERM");
    runner.kill("SIGTERM");
    expect((await api.exited).code).toBe(0);
    expect((await runner.exited).code).toBe(0);
    const output = api.output() + runner.output();
    expect(output).toContain('"message":"request"');
    expect(output).toContain("shard ownership started");
    for (const secret of [password, org.key, platform.key, org.key.slice(4), platform.key.slice(4)]) {
      const hits = output.split("\n").filter((line) => line.includes(secret));
      expect(hits, `lines carrying a secret:\n${hits.join("\n")}`).toEqual([]);
    }
  }, 120_000);

  it("a configuration error names the key but not the password", async () => {
    const proc = spawnRole({
      DAPI_ROLE: "api",
      DATABASE_URL: `mysql://svc:${password}@db.internal:5432/tenor`,
      REDIS_URL: `redis://default:${password}@127.0.0.1:6379`,
      TENOR_API_PORT: "70000",
    });
    running.push(proc);
    expect((await proc.exited).code).toBe(2);
    expect(proc.output()).toContain("databaseUrl (DATABASE_URL)");
    expect(proc.output()).toContain("api.port (TENOR_API_PORT)");
    expect(proc.output()).not.toContain(password);
  });
});
