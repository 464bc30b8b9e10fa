import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOG_CATEGORIES } from "../../src/observability/logger.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { freePort, spawnProcess, type TestProcess } from "../support/processes.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";
import { eventually, type RoleProcess, roleReady, spawnRole } from "../support/role-process.js";

let db: TestDatabase;
const prefix = testRedisPrefix(import.meta.url);
const running: RoleProcess[] = [];
const extraServers: TestProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  for (const role of running) role.kill("SIGKILL");
  for (const server of extraServers) await server.kill();
  await deleteRedisPrefix(prefix);
  await db.drop();
});

async function baseEnv(): Promise<Record<string, string>> {
  return {
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl(),
    TENOR_REDIS_PREFIX: prefix,
    TENOR_API_PORT: String(await freePort()),
    TENOR_RUNNER_HEALTH_PORT: String(await freePort()),
    TENOR_INDEXER_HEALTH_PORT: String(await freePort()),
  };
}

function start(env: Record<string, string>): RoleProcess {
  const role = spawnRole(env);
  running.push(role);
  return role;
}

/** Piped stdout is no terminal: every line is a JSON object filed under a known category. */
function expectJsonLinesWithCategories(output: string): void {
  const lines = output.split("\n").filter((line) => line.startsWith("{"));
  expect(lines.length).toBeGreaterThan(0);
  expect(output.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("{"))).toEqual([]);
  for (const line of lines) expect(LOG_CATEGORIES).toContain(JSON.parse(line).category);
}

describe("role process", () => {
  it("exits 2 naming the allowed roles when DAPI_ROLE is combined or missing", async () => {
    const env = await baseEnv();
    for (const role of ["combined", undefined]) {
      const proc = start(role ? { ...env, DAPI_ROLE: role } : env);
      expect((await proc.exited).code).toBe(2);
      expect(proc.output()).toContain("must be one of api, runner, indexer");
    }
  });

  it("exits 2 naming the key, the value and the rule of an invalid configuration", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tenor-config-"));
    const file = join(dir, "tenor.yaml");
    writeFileSync(file, "durable:\n  confirmationWatcher:\n    intervalMs: 10\n");
    const proc = start({ ...(await baseEnv()), DAPI_ROLE: "runner", TENOR_CONFIG: file });
    expect((await proc.exited).code).toBe(2);
    expect(proc.output()).toContain("durable.confirmationWatcher.intervalMs = 10: 50 ≤ v ≤ 60000");
  });

  it("exits 1 naming the URL and how to start PostgreSQL when it is unreachable", async () => {
    const proc = start({
      ...(await baseEnv()),
      DAPI_ROLE: "api",
      DATABASE_URL: "postgresql://tenor:secret@127.0.0.1:1/tenor",
      // No relaunch window: test/roles/startup-relaunch.int.test.ts covers retrying.
      TENOR_STARTUP_RELAUNCH_BUDGET_MS: "0",
    });
    expect((await proc.exited).code).toBe(1);
    expect(proc.output()).toContain("PostgreSQL at postgresql://tenor:***@127.0.0.1:1/tenor is unreachable");
    expect(proc.output()).toContain("pg_ctlcluster");
    expect(proc.output()).not.toContain("secret");
  });

  for (const [role, setting] of [
    ["api", "TENOR_API_PORT"],
    ["runner", "TENOR_RUNNER_HEALTH_PORT"],
    ["indexer", "TENOR_INDEXER_HEALTH_PORT"],
  ] as const) {
    it(`${role}: a port in use exits 1 at once naming it, before any work and without relaunching`, async () => {
      const env = await baseEnv();
      const holder = createServer();
      await new Promise<void>((resolve) => holder.listen(Number(env[setting]), "0.0.0.0", resolve));
      try {
        // A relaunch budget that would show retries: a bind failure must not use it (no relaunch
        // is logged), however long the loaded machine takes to start the process.
        const proc = start({ ...env, DAPI_ROLE: role, TENOR_STARTUP_RELAUNCH_BUDGET_MS: "3000" });
        expect((await proc.exited).code).toBe(1);
        expect(proc.output()).toContain(`port ${env[setting]} (${setting}) is already in use`);
        expect(proc.output()).toContain("PORT_UNAVAILABLE");
        expect(proc.output()).not.toContain("relaunching");
        // No work began: the process never joined shard ownership or runner liveness.
        const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM replicas WHERE pid = $1", [
          proc.child.pid,
        ]);
        expect(rows[0].n).toBe(0);
      } finally {
        await new Promise((resolve) => holder.close(resolve));
      }
    });
  }

  for (const role of ["api", "runner", "indexer"] as const) {
    it(`${role}: serves /livez and /readyz, then drains and exits 0 on SIGTERM`, async () => {
      const env = await baseEnv();
      const port = {
        api: env.TENOR_API_PORT,
        runner: env.TENOR_RUNNER_HEALTH_PORT,
        indexer: env.TENOR_INDEXER_HEALTH_PORT,
      }[role];
      const proc = start({ ...env, DAPI_ROLE: role });
      await eventually(
        `${role} /readyz`,
        async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200,
      );
      expect((await fetch(`http://127.0.0.1:${port}/livez`)).status).toBe(200);
      proc.kill("SIGTERM");
      expect(await proc.exited).toEqual({ code: 0, signal: null });
      expect(proc.output()).toContain('"message":"draining"');
      expect(proc.output()).toContain('"message":"stopped"');
      expectJsonLinesWithCategories(proc.output());
    });
  }

  it("runner: runs the chain boundary's nonce-recovery schedule with its own", async () => {
    const env = await baseEnv();
    const proc = start({ ...env, DAPI_ROLE: "runner" });
    await eventually(
      "runner /readyz",
      async () => (await fetch(`http://127.0.0.1:${env.TENOR_RUNNER_HEALTH_PORT}/readyz`)).status === 200,
    );
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      const { rows } = await pool.query<{ name: string }>("SELECT name FROM schedules");
      expect(rows.map((r) => r.name)).toEqual(expect.arrayContaining(["nonce-recovery", "execution-sweep"]));
    } finally {
      await pool.end();
    }
    proc.kill("SIGTERM");
    expect((await proc.exited).code).toBe(0);
  });

  it("api answers unknown routes with problem+json, not HTML", async () => {
    const env = await baseEnv();
    const api = start({ ...env, DAPI_ROLE: "api" });
    const url = `http://127.0.0.1:${env.TENOR_API_PORT}`;
    await roleReady("api ready", api, url);
    const res = await fetch(`${url}/v1/nothing-here`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(await res.json()).toMatchObject({ status: 404, code: "NOT_FOUND", instance: "/v1/nothing-here" });
  });

  it("refuses to start a runner on a Redis whose maxmemory-policy can evict keys", async () => {
    const port = await freePort();
    const server = spawnProcess("redis-server", "redis-server", [
      "--port",
      String(port),
      "--save",
      "",
      "--appendonly",
      "no",
      "--maxmemory-policy",
      "allkeys-lru",
    ]);
    extraServers.push(server);
    const url = `redis://127.0.0.1:${port}`;
    const proc = spawnRole({ ...(await baseEnv()), DAPI_ROLE: "runner", REDIS_URL: url });
    running.push(proc);
    // The server may take a moment to listen; the role retries its first ping for a few seconds.
    expect((await proc.exited).code).toBe(1);
    expect(proc.output()).toContain("maxmemory-policy=allkeys-lru");
    expect(proc.output()).toContain("CONFIG SET maxmemory-policy noeviction");
  });
});
