import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { freePort, spawnProcess, type TestProcess } from "../support/processes.js";
import { deleteRedisPrefix, testRedisPrefix } from "../support/redis.js";
import { eventually, type RoleProcess, spawnRole } from "../support/role-process.js";

/**
 * The startup relaunch budget with real processes: a runner whose Redis is not up yet retries in
 * process and becomes ready once Redis starts; one whose Redis never comes exits 1 when the
 * budget is spent, having logged why at every attempt.
 */
let db: TestDatabase;
let configFile: string;
const prefix = testRedisPrefix(import.meta.url);
const running: RoleProcess[] = [];
const servers: TestProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const dir = mkdtempSync(join(tmpdir(), "tenor-relaunch-"));
  configFile = join(dir, "tenor.yaml");
  writeFileSync(configFile, "startup: { relaunchBudgetMs: 60000, initialDelayMs: 100, maxDelayMs: 400 }\n");
});

afterAll(async () => {
  for (const role of running) role.kill("SIGKILL");
  for (const server of servers) await server.kill();
  await db.drop();
});

async function runner(redisPort: number, extra: Record<string, string> = {}) {
  const healthPort = await freePort();
  const role = spawnRole({
    DAPI_ROLE: "runner",
    DATABASE_URL: db.url,
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    TENOR_REDIS_PREFIX: prefix,
    TENOR_CONFIG: configFile,
    TENOR_RUNNER_HEALTH_PORT: String(healthPort),
    ...extra,
  });
  running.push(role);
  return { role, healthPort };
}

describe("startup relaunch", () => {
  it("retries while Redis is away and becomes ready once it starts", async () => {
    const redisPort = await freePort();
    const { role, healthPort } = await runner(redisPort);
    await eventually(
      "a logged relaunch",
      () => role.output().includes("role failed to start; relaunching"),
      30_000,
    );
    expect(role.output()).toContain(`Redis at redis://127.0.0.1:${redisPort} is unreachable`);
    const server = spawnProcess("redis-server", "redis-server", [
      "--port",
      String(redisPort),
      "--save",
      "",
      "--appendonly",
      "no",
    ]);
    servers.push(server);
    await eventually(
      "runner ready",
      async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status === 200,
      45_000,
    );
    role.kill("SIGTERM");
    expect((await role.exited).code).toBe(0);
    const { Redis } = await import("ioredis");
    const client = new Redis(`redis://127.0.0.1:${redisPort}`);
    await deleteRedisPrefix(prefix, client);
    client.disconnect();
    server.signal("SIGTERM");
  });

  // An attempt may wait up to 5 s for Redis to answer (src/roles/dependencies.ts): a 7 s budget
  // leaves room for a second attempt even then.
  it("exits 1 once the budget is spent, naming the dependency", async () => {
    const { role } = await runner(await freePort(), { TENOR_STARTUP_RELAUNCH_BUDGET_MS: "7000" });
    expect((await role.exited).code).toBe(1);
    expect(role.output()).toContain("role failed to start; relaunching");
    expect(role.output()).toContain("startup relaunch budget exhausted; exiting");
    expect(role.output()).toMatch(
      /failed to start after [2-9]\d* attempt\(s\): Redis at redis:\/\/127\.0\.0\.1:\d+ is unreachable/,
    );
  });
});
