import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Pool } from "pg";
import { issueApiKey } from "../../../src/api/auth/api-key.js";
import type { OrgRole } from "../../../src/auth/api-roles.js";
import { PgApiKeys } from "../../../src/store/pg-api-keys.js";
import { createTestDatabase, type TestDatabase } from "../../support/database.js";
import { freePort } from "../../support/ports.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../../support/redis.js";
import { eventually, type RoleProcess, spawnRole } from "../../support/role-process.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read the API's JSON answers as they come.
type Json = any;

/** The principals of org `demo` the console and CLI tests act as, each its own person. */
const PEOPLE = {
  integrator: "integrator",
  approver: "approver",
  operator: "operator",
} as const satisfies Record<string, OrgRole>;
export type Person = keyof typeof PEOPLE;

/**
 * The real api and runner roles (workers/main.ts, the release's workflows) on a database and Redis
 * prefix of the test file's own, with an evidence signing key configured, and API keys of org
 * `demo` for an integrator, an approver and an operator.
 */
export interface RolesHarness {
  db: TestDatabase;
  pool: Pool;
  /** The api's base URL (http://127.0.0.1:<port>). */
  base: string;
  /** DATABASE_URL, REDIS_URL, TENOR_REDIS_PREFIX and TENOR_API_URL of this deployment. */
  env: Record<string, string>;
  prefix: string;
  keys: Record<Person, string>;
  /** The public half of the evidence signing key. */
  evidencePublicKey: KeyObject;
  /** Calls the API as `person`; answers status and JSON body. */
  call(person: Person, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }>;
  /** Starts `demo.asset-issue` as the integrator; returns its id. */
  startDemo(input: Record<string, unknown>): Promise<string>;
  /** Polls the execution until `predicate` holds. */
  waitFor(id: string, predicate: (e: Json) => boolean, what: string): Promise<Json>;
  stop(): Promise<void>;
}

export async function startRolesHarness(file: string): Promise<RolesHarness> {
  const db = await createTestDatabase();
  const prefix = testRedisPrefix(file);
  const port = await freePort();
  const runnerPort = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "tenor-roles-"));
  const configFile = path.join(dir, "config.yaml");
  writeFileSync(
    configFile,
    JSON.stringify({
      durable: {
        lock: { lockDurationMs: 2000, stalledIntervalMs: 1000 },
        sweep: { intervalMs: 500, graceMs: 1000 },
      },
      api: { rateLimit: { max: 1_000_000, windowSeconds: 60 } },
      evidence: { signingKey: { env: "TENOR_TEST_EVIDENCE_KEY" } },
    }),
  );
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl(),
    TENOR_REDIS_PREFIX: prefix,
    TENOR_CONFIG: configFile,
  };
  const roles: RoleProcess[] = [
    spawnRole({
      ...env,
      DAPI_ROLE: "api",
      TENOR_API_PORT: String(port),
      TENOR_LOG_LEVEL: "warn",
      TENOR_TEST_EVIDENCE_KEY: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    }),
    spawnRole({
      ...env,
      DAPI_ROLE: "runner",
      TENOR_RUNNER_HEALTH_PORT: String(runnerPort),
      TENOR_LOG_LEVEL: "warn",
    }),
  ];
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    for (const role of roles) role.kill("SIGKILL");
    await Promise.all(roles.map((r) => r.exited));
    await deleteRedisPrefix(prefix).catch(() => undefined);
    await db.drop();
  };
  try {
    await eventually("api ready", async () => (await fetch(`${base}/readyz`)).ok, 90_000);
    await eventually(
      "runner ready",
      async () => (await fetch(`http://127.0.0.1:${runnerPort}/readyz`)).ok,
      90_000,
    );
  } catch (error) {
    const output = roles.map((r) => r.output()).join("\n");
    await stop();
    throw new Error(`${(error as Error).message}\n${output}`);
  }
  const apiKeys = new PgApiKeys(db.pool);
  const keys = {} as Record<Person, string>;
  for (const [person, role] of Object.entries(PEOPLE) as [Person, OrgRole][]) {
    keys[person] = (await issueApiKey(apiKeys, { orgId: "demo", role, subject: person, name: person })).key;
  }
  const call: RolesHarness["call"] = async (person, method, urlPath, body) => {
    const res = await fetch(`${base}${urlPath}`, {
      method,
      headers: {
        authorization: `Bearer ${keys[person]}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
  return {
    db,
    pool: db.pool,
    base,
    env: { ...env, TENOR_API_URL: base },
    prefix,
    keys,
    evidencePublicKey: publicKey,
    call,
    async startDemo(input) {
      const started = await call("integrator", "POST", "/v1/workflows/demo.asset-issue/executions", input);
      if (started.status !== 202)
        throw new Error(`start answered ${started.status}: ${JSON.stringify(started.body)}`);
      return started.body.id as string;
    },
    async waitFor(id, predicate, what) {
      let last: unknown = null;
      try {
        await eventually(what, async () => {
          last = (await call("operator", "GET", `/v1/executions/${id}`)).body;
          return predicate(last);
        });
      } catch (error) {
        throw new Error(`${(error as Error).message}: ${JSON.stringify(last)}`);
      }
      return last;
    },
    stop,
  };
}
