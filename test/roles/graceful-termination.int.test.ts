import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_WORKFLOWS } from "../../flows/index.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { createLogger } from "../../src/observability/logger.js";
import { createExecutionClient } from "../../src/roles/create-execution-client.js";
import { sampleValue } from "../observability/metric-labels.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { freePort } from "../support/ports.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";
import { eventually, type RoleProcess, spawnRole } from "../support/role-process.js";

/**
 * Graceful termination with a real SIGTERM under load: two runner processes work through a steady
 * stream of executions; one is terminated. Its /readyz turns 503 first and never back, it exits 0
 * (the grace timer would exit 1), its shards go to the other runner, and every execution started
 * before, during and after the drain completes: nothing is lost.
 */
let db: TestDatabase;
let producer: Redis;
let env: Record<string, string>;
const prefix = testRedisPrefix(import.meta.url);
const roles: RoleProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  producer = new Redis(redisUrl(), { maxRetriesPerRequest: 3 });
  const dir = mkdtempSync(join(tmpdir(), "tenor-sigterm-"));
  writeFileSync(
    join(dir, "tenor.yaml"),
    [
      "shutdown: { graceMs: 20000, readinessDelayMs: 1000 }",
      "durable:",
      "  sharding: { shardCount: 64, refreshIntervalMs: 200, livenessWindowMs: 1000 }",
      "  runnerConcurrency: 20",
    ].join("\n"),
  );
  env = {
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl(),
    TENOR_REDIS_PREFIX: prefix,
    TENOR_CONFIG: join(dir, "tenor.yaml"),
    TENOR_DATABASE_POOL_MAX: "6",
  };
});

afterAll(async () => {
  for (const role of roles) role.kill("SIGKILL");
  await Promise.all(roles.map((r) => r.exited));
  await deleteRedisPrefix(prefix, producer).catch(() => undefined);
  producer.disconnect();
  await db.drop();
});

async function startRunner(): Promise<{ role: RoleProcess; port: number }> {
  const port = await freePort();
  const role = spawnRole({ ...env, DAPI_ROLE: "runner", TENOR_RUNNER_HEALTH_PORT: String(port) });
  roles.push(role);
  await eventually("runner ready", async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, 60_000);
  return { role, port };
}

const metricsOf = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();

describe("SIGTERM under load", () => {
  it("drains: readiness 503 first, shards handed over, every execution completes, exit 0", async () => {
    const a = await startRunner();
    const b = await startRunner();
    const execution = createExecutionClient({
      pool: db.pool,
      redis: producer,
      prefix,
      registry: new WorkflowRegistry(ALL_WORKFLOWS),
      logger: createLogger({ level: "error" }),
    });
    const started: string[] = [];
    let loading = true;
    const load = (async () => {
      for (let batch = 0; loading; batch++) {
        const ids = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            execution.client.start({
              workflow: "demo.provision-wallet",
              input: { orgId: "load", purpose: `p${batch}-${i}` },
              orgId: "load",
            }),
          ),
        );
        started.push(...ids.map((r) => r.executionId));
      }
    })();
    const completedTurns = async (port: number) =>
      sampleValue(await metricsOf(port), "tenor_turn_duration_seconds_count", {
        workflow: "demo.provision-wallet",
        outcome: "completed",
      }) ?? 0;
    await eventually("runner A under load", async () => (await completedTurns(a.port)) >= 20, 30_000);

    const readiness: (number | "refused")[] = [];
    const watch = (async () => {
      while (a.role.child.exitCode === null) {
        readiness.push(
          await fetch(`http://127.0.0.1:${a.port}/readyz`).then(
            (r) => r.status,
            () => "refused" as const,
          ),
        );
      }
    })();
    a.role.kill("SIGTERM");
    const exit = await a.role.exited;
    await watch;
    const afterFirst503 = readiness.slice(readiness.indexOf(503));
    expect(readiness).toContain(503);
    expect(afterFirst503).not.toContain(200);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(a.role.output()).toMatch(/"message":"draining"[\s\S]*"message":"stopped"/);

    // B keeps working after A left; then the stream stops and everything must finish.
    const bBefore = await completedTurns(b.port);
    await eventually(
      "runner B still working",
      async () => (await completedTurns(b.port)) > bBefore + 10,
      30_000,
    );
    loading = false;
    await load;
    await eventually(
      "every started execution completed",
      async () => {
        const { rows } = await db.pool.query<{ n: string }>(
          "SELECT count(*) AS n FROM executions WHERE id = ANY($1::uuid[]) AND status = 'completed'",
          [started],
        );
        return Number(rows[0]!.n) === started.length;
      },
      60_000,
    );
    await eventually(
      "runner B owns every runner shard",
      async () => sampleValue(await metricsOf(b.port), "tenor_shards_owned", { domain: "runner" }) === 64,
      30_000,
    );
    await execution.close();
    expect(started.length).toBeGreaterThan(40);
  });
});
