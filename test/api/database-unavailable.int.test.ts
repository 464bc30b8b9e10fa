import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../../src/api/auth/api-key.js";
import { quoteIdentifier } from "../../src/store/migrations/database-url.js";
import { PgApiKeys } from "../../src/store/pg-api-keys.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { freePort } from "../support/ports.js";
import { waitUntil } from "../support/processes.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";
import { type RoleProcess, spawnRole } from "../support/role-process.js";

/**
 * A request that gets no PostgreSQL connection answers 503 DATABASE_UNAVAILABLE with Retry-After,
 * never 500 INTERNAL, and loses nothing: black-box against a real api process (pool of 2) whose
 * PostgreSQL role has a CONNECTION LIMIT, on a real server.
 *
 * The api's connections are held busy deterministically: the test locks `api_keys`, which every
 * request reads to authenticate, so each request holds its connection waiting for the lock until
 * the test rolls back. With both of the pool's connections held, the next request waits for the
 * pool's connection timeout (5 s): `pool_timeout`. With the role's limit at 1, the pool's second
 * connection is refused by the server (SQLSTATE 53300): `too_many_connections`.
 */
const POOL_MAX = 2;

let db: TestDatabase;
let api: RoleProcess;
let base: string;
let key: string;
/** The api's own PostgreSQL role: a superuser is exempt from CONNECTION LIMIT. */
let apiRole: string;
const prefix = testRedisPrefix(import.meta.url);

beforeAll(async () => {
  db = await createTestDatabase();
  apiRole = `${db.name}_api`;
  const role = quoteIdentifier(apiRole);
  await db.pool.query(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 1`);
  await db.pool.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
  await db.pool.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
  await db.pool.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
  key = (
    await issueApiKey(new PgApiKeys(db.pool), {
      orgId: "dbu",
      role: "integrator",
      name: "dbu-integrator",
      subject: "integrator@dbu",
    })
  ).key;
  const url = new URL(db.url);
  url.username = apiRole;
  url.password = "";
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  api = spawnRole({
    DAPI_ROLE: "api",
    DATABASE_URL: url.toString(),
    REDIS_URL: redisUrl(),
    TENOR_REDIS_PREFIX: prefix,
    TENOR_API_PORT: String(port),
    TENOR_DATABASE_POOL_MAX: String(POOL_MAX),
  });
  await waitUntil("api ready", async () => (await fetch(`${base}/readyz`)).ok);
});

afterAll(async () => {
  api?.kill("SIGKILL");
  await api?.exited;
  if (apiRole) {
    await db.pool.query(`DROP OWNED BY ${quoteIdentifier(apiRole)}`).catch(() => undefined);
    await db.pool.query(`DROP ROLE IF EXISTS ${quoteIdentifier(apiRole)}`).catch(() => undefined);
  }
  await deleteRedisPrefix(prefix).catch(() => undefined);
  await db?.drop();
});

const get = (path: string) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
const start = (idempotencyKey: string) =>
  fetch(`${base}/v1/workflows/demo.provision-wallet/executions`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      "idempotency-key": idempotencyKey,
    },
    body: JSON.stringify({ purpose: idempotencyKey }),
  });

/**
 * Locks `api_keys` until the returned function rolls back, and starts `requests` requests that
 * each hold one of the api's connections waiting for the lock; resolves once they all do.
 */
async function holdApiConnections(
  requests: number,
): Promise<{ held: Promise<Response[]>; release(): Promise<void> }> {
  const client: pg.PoolClient = await db.pool.connect();
  await client.query("BEGIN");
  await client.query("LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE");
  const held = Promise.all(Array.from({ length: requests }, () => get("/v1/executions")));
  await waitUntil(`${requests} api connection(s) waiting for the lock`, async () => {
    const { rows } = await db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1 AND wait_event_type = 'Lock'",
      [apiRole],
    );
    return rows[0]?.n === requests;
  });
  return {
    held,
    async release() {
      await client.query("ROLLBACK");
      client.release();
    },
  };
}

async function executionsWithKey(idempotencyKey: string): Promise<{ id: string; status: string }[]> {
  const { rows } = await db.pool.query<{ id: string; status: string }>(
    "SELECT id, status FROM executions WHERE idempotency_key = $1",
    [idempotencyKey],
  );
  return rows;
}

async function expectUnavailable(res: Response, reason: string): Promise<void> {
  const body = await res.text();
  expect(res.status, body).toBe(503);
  expect(res.headers.get("retry-after")).toBe("1");
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  expect(JSON.parse(body)).toMatchObject({
    status: 503,
    code: "DATABASE_UNAVAILABLE",
    retryable: true,
    details: { reason, retryAfterSeconds: 1 },
  });
}

describe("a request without a database connection", () => {
  it("answers 503 too_many_connections when the server refuses one, and the start it refused is not stored", async () => {
    expect((await start("before")).status).toBe(202);
    const [before] = await executionsWithKey("before");
    const hold = await holdApiConnections(1);
    try {
      // The pool has one connection held and room for another, which the server refuses (limit 1).
      await expectUnavailable(await start("during"), "too_many_connections");
      expect(await executionsWithKey("during")).toEqual([]);
    } finally {
      await hold.release();
    }
    expect((await hold.held).map((r) => r.status)).toEqual([200]);
    // Tried again unchanged, it is started once; what was stored before is as it was.
    expect((await start("during")).status).toBe(202);
    expect(await executionsWithKey("during")).toHaveLength(1);
    expect(await executionsWithKey("before")).toEqual([before]);
  });

  it("answers 503 pool_timeout when every pooled connection stays busy past the pool's timeout", async () => {
    await db.pool.query(`ALTER ROLE ${quoteIdentifier(apiRole)} CONNECTION LIMIT ${POOL_MAX}`);
    const hold = await holdApiConnections(POOL_MAX);
    try {
      await expectUnavailable(await start("queued"), "pool_timeout");
      expect(await executionsWithKey("queued")).toEqual([]);
    } finally {
      await hold.release();
    }
    expect((await hold.held).map((r) => r.status)).toEqual([200, 200]);
    expect((await get("/v1/executions")).status).toBe(200);
  });
});
