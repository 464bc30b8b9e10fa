import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../../src/api/auth/api-key.js";
import { PgApiKeys } from "../../src/store/pg-api-keys.js";
import { WebhookSecretKeyring } from "../../src/webhooks/secret-keyring.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { freePort } from "../support/ports.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";
import { eventually, type RoleProcess, roleReady, spawnRole } from "../support/role-process.js";
import { createTestSubscription } from "../webhooks/support.js";

/**
 * Issue 30's security items, black-box against the real api and runner roles (workers/main.ts):
 * webhook SSRF through IPv6 forms that carry an IPv4 address, Bull Board actions beyond the
 * documented ones, integer parameters outside PostgreSQL's range, a body that is not the gzip it
 * claims, and a `valueWei` beyond uint256.
 */
let db: TestDatabase;
let base: string;
let apiHealth: string;
let keys: Record<"integrator" | "admin" | "platformAdmin", string>;
const prefix = testRedisPrefix(import.meta.url);
const roles: RoleProcess[] = [];
const webhookKey = randomBytes(32);
const CHAIN_ID = 31337;

beforeAll(async () => {
  db = await createTestDatabase();
  const dir = mkdtempSync(path.join(tmpdir(), "tenor-wiring-"));
  const webhooks = {
    pollIntervalMs: 100,
    timeoutMs: 1000,
    maxAttempts: 1,
    secretKeys: [{ id: "k1", key: { env: "TENOR_WEBHOOK_KEY_K1" } }],
  };
  const apiConfig = path.join(dir, "api.yaml");
  const runnerConfig = path.join(dir, "runner.yaml");
  // The api only validates against the configured chain ids; no RPC is dialled to refuse a body.
  writeFileSync(
    apiConfig,
    JSON.stringify({
      webhooks,
      chains: [{ id: CHAIN_ID, name: "unreached", rpcUrls: ["http://127.0.0.1:9"] }],
      signers: [
        {
          id: "vault",
          kind: "custody",
          orgId: "org-a",
          address: "0x00000000000000000000000000000000000000c5",
          baseUrl: "http://127.0.0.1:9",
          apiKey: { env: "TENOR_WIRING_VAULT_KEY" },
        },
      ],
    }),
  );
  writeFileSync(runnerConfig, JSON.stringify({ webhooks }));
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl(),
    TENOR_REDIS_PREFIX: prefix,
    TENOR_WEBHOOK_KEY_K1: webhookKey.toString("base64"),
    TENOR_WIRING_VAULT_KEY: "unused-by-the-api",
    TENOR_API_PORT: String(await freePort()),
    TENOR_API_HEALTH_PORT: String(await freePort()),
    TENOR_RUNNER_HEALTH_PORT: String(await freePort()),
  };
  base = `http://127.0.0.1:${env.TENOR_API_PORT}`;
  apiHealth = `http://127.0.0.1:${env.TENOR_API_HEALTH_PORT}`;
  const api = spawnRole({ ...env, DAPI_ROLE: "api", TENOR_CONFIG: apiConfig });
  const runner = spawnRole({ ...env, DAPI_ROLE: "runner", TENOR_CONFIG: runnerConfig });
  roles.push(api, runner);
  const store = new PgApiKeys(db.pool);
  const issue = async (orgId: string | null, role: "integrator" | "admin" | "platform-admin") =>
    (await issueApiKey(store, { orgId, role, name: role, subject: `${role}@test` })).key;
  keys = {
    integrator: await issue("org-a", "integrator"),
    admin: await issue("org-a", "admin"),
    platformAdmin: await issue(null, "platform-admin"),
  };
  // Both roles start at once; on a loaded 2-core machine either may take tens of seconds.
  await Promise.all([
    roleReady("api ready", api, base),
    roleReady("runner ready", runner, `http://127.0.0.1:${env.TENOR_RUNNER_HEALTH_PORT}`),
  ]);
}, 120_000);

afterAll(async () => {
  for (const role of roles) role.kill("SIGKILL");
  await Promise.all(roles.map((r) => r.exited));
  await deleteRedisPrefix(prefix).catch(() => undefined);
  await db?.drop();
});

function call(
  who: keyof typeof keys,
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  return fetch(`${base}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${keys[who]}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    body:
      body === undefined
        ? undefined
        : typeof body === "string" || body instanceof Uint8Array
          ? body
          : JSON.stringify(body),
  });
}

interface Problem {
  code: string;
  detail: string;
  errors: { pointer: string; message: string }[];
}
const problem = async (res: Response) => (await res.json()) as Problem;

/** IPv6 literals that carry an internal IPv4 address, or lie in a range refused outright. */
const EMBEDDING = [
  ["NAT64 metadata", "[64:ff9b::a9fe:a9fe]", "169.254.169.254"],
  ["NAT64 private", "[64:ff9b::a00:1]", "10.0.0.1"],
  ["NAT64 loopback", "[64:ff9b::7f00:1]", "127.0.0.1"],
  ["local-use NAT64", "[64:ff9b:1::a00:1]", null],
  ["6to4 loopback", "[2002:7f00:1::]", "127.0.0.1"],
  ["6to4 metadata", "[2002:a9fe:a9fe::]", "169.254.169.254"],
  ["IPv4-compatible loopback", "[::127.0.0.1]", "127.0.0.1"],
  ["IPv4-compatible metadata", "[::a9fe:a9fe]", "169.254.169.254"],
  ["SIIT loopback", "[::ffff:0:7f00:1]", "127.0.0.1"],
  ["IPv4-mapped, hex form", "[::ffff:7f00:1]", "127.0.0.1"],
] as const;

describe("webhook SSRF through IPv6 forms that embed IPv4", () => {
  it.each(EMBEDDING)("refuses a %s subscription (%s) at subscription time", async (_form, host, carried) => {
    const res = await call("admin", "POST", "/v1/webhooks/subscriptions", {
      url: `http://${host}:8080/hook`,
      events: ["execution.completed"],
    });
    const body = await problem(res);
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(body.errors).toEqual([
      { pointer: "body.url", message: expect.stringMatching(/internal address/) },
    ]);
    if (carried) expect(body.detail).toContain(`carries IPv4 ${carried}`);
  });

  it("accepts a public IPv4 address in the same forms", async () => {
    for (const host of ["[64:ff9b::808:808]", "[2002:808:808::]"]) {
      const res = await call("admin", "POST", "/v1/webhooks/subscriptions", {
        url: `https://${host}/hook`,
        events: ["execution.completed"],
      });
      expect(res.status, host).toBe(201);
    }
  });

  it("refuses at connect time a stored subscription whose URL carries an internal IPv4", async () => {
    // Written directly, as a subscription created before the guard knew these forms would be.
    const keyring = new WebhookSecretKeyring([{ id: "k1", key: webhookKey }], { plaintextAllowed: false });
    const subscription = await createTestSubscription(
      db.pool,
      {
        orgId: "org-a",
        url: "http://[64:ff9b::a9fe:a9fe]/latest/meta-data",
        events: ["execution.completed"],
        secret: "whsec_x",
      },
      keyring,
    );
    const test = await call("admin", "POST", `/v1/webhooks/subscriptions/${subscription.id}/test`);
    expect(test.status).toBe(202);
    let receipt: { error: string | null } | undefined;
    await eventually("the attempt's receipt", async () => {
      const { rows } = await db.pool.query(
        `SELECT r.error FROM webhook_receipts r JOIN webhook_deliveries d ON d.id = r.delivery_id
          WHERE d.subscription_id = $1 AND r.duration_ms IS NOT NULL`,
        [subscription.id],
      );
      receipt = rows[0];
      return receipt !== undefined;
    });
    expect(receipt?.error).toMatch(/url refused: .*carries IPv4 169\.254\.169\.254/);
  });
});

describe("Bull Board actions are the documented ones", () => {
  it("refuses platform-admin adding a job, and every other undocumented change, before Bull Board", async () => {
    const executions = new Queue("executions", { connection: new Redis(redisUrl()), prefix });
    try {
      const before = await executions.count();
      const refused = [
        [
          "POST",
          "/admin/queues/api/queues/executions/add",
          { name: "turn", data: { executionId: crypto.randomUUID() } },
        ],
        ["PUT", "/admin/queues/api/queues/executions/empty", undefined],
        ["PUT", "/admin/queues/api/queues/executions/obliterate", undefined],
        ["PUT", "/admin/queues/api/queues/executions/promote", undefined],
        ["PUT", "/admin/queues/api/queues/executions/concurrency", { concurrency: 1 }],
        ["PATCH", "/admin/queues/api/queues/executions/1/update-data", { data: {} }],
        ["PATCH", "/admin/queues/api/queues/executions/1/priority", { priority: 1 }],
      ] as const;
      for (const [method, url, body] of refused) {
        const res = await call("platformAdmin", method, url, body);
        expect(res.status, `${method} ${url}`).toBe(403);
        expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
        expect((await problem(res)).code).toBe("QUEUES_ACTION_NOT_ALLOWED");
      }
      expect(await executions.count()).toBe(before);
      // A documented action still reaches Bull Board.
      expect((await call("platformAdmin", "PUT", "/admin/queues/api/queues/schedules/pause")).status).toBe(
        200,
      );
      expect((await call("platformAdmin", "PUT", "/admin/queues/api/queues/schedules/resume")).status).toBe(
        200,
      );
    } finally {
      await executions.close();
      await (executions.opts.connection as Redis).quit();
    }
  });
});

describe("integer parameters within their column's range", () => {
  it.each([
    ["/v1/organisations/systems?chainId=2147483648", "query.chainId"],
    ["/v1/assets?chainId=2147483648", "query.chainId"],
    [
      "/v1/chains/2147483648/tokens/0x0000000000000000000000000000000000000001/balances/0x0000000000000000000000000000000000000002",
      "path.chainId",
    ],
    ["/v1/chains/2147483648/system-settings/0x0000000000000000000000000000000000000001", "path.chainId"],
    ["/v1/executions?limit=1e2", "query.limit"],
  ])("GET %s is 400 naming %s", async (url, pointer) => {
    const res = await call("admin", "GET", url);
    const body = await problem(res);
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(body.errors[0]?.pointer).toBe(pointer);
  });
});

describe("bodies refused naming the real fault", () => {
  it("a body that says gzip and is not gzip is a 400 about its encoding", async () => {
    const res = await call("admin", "POST", "/v1/webhooks/subscriptions", '{"not":"gzip"}', {
      "content-encoding": "gzip",
    });
    const body = await problem(res);
    expect(res.status).toBe(400);
    expect(body.detail).toMatch(/not valid gzip data/);
    expect(body.detail).not.toMatch(/percent-encoding/);
    expect(body.errors[0]?.pointer).toBe("header.content-encoding");
    // Real gzip is read, then judged by the route's schema.
    const real = await call("admin", "POST", "/v1/webhooks/subscriptions", gzipSync("{}"), {
      "content-encoding": "gzip",
    });
    expect(real.status).toBe(400);
    expect((await problem(real)).errors[0]?.pointer).toMatch(/^body\./);
  });

  it("a 100-digit valueWei is refused at the API with the field and the bound", async () => {
    const res = await call("integrator", "POST", `/v1/chains/${CHAIN_ID}/transactions`, {
      signerId: "demo",
      to: "0x0000000000000000000000000000000000000001",
      valueWei: "9".repeat(100),
    });
    const body = await problem(res);
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(body.errors).toEqual([
      { pointer: "body.valueWei", message: expect.stringContaining("2^256 − 1") },
    ]);
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM executions");
    expect(rows[0].n).toBe(0);
  });
});

describe("deployments through a custody signer", () => {
  it("are refused at the API naming body.signerId: the api role reads its custody signers from the configuration", async () => {
    const res = await call("integrator", "POST", `/v1/chains/${CHAIN_ID}/transactions`, {
      signerId: "vault",
      data: "0x6080604052",
    });
    const body = await problem(res);
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(body.errors).toEqual([
      { pointer: "body.signerId", message: expect.stringContaining("is custody signer vault") },
    ]);
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM executions");
    expect(rows[0].n).toBe(0);
  });
});

describe("metrics are not public", () => {
  it("the api serves /metrics on its health port only; the public API port answers 404", async () => {
    const open = await fetch(`${base}/metrics`);
    expect(open.status).toBe(404);
    expect(await open.text()).not.toContain("tenor_");
    const scraped = await fetch(`${apiHealth}/metrics`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('tenor_process_cpu_seconds_total{role="api"}');
    // Probes still answer on the public port (the chart's and the image's health checks use it).
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });
});
