import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDoctorChecks } from "../../src/cli/doctor-checks.js";
import { loadConfig } from "../../src/config/load-config.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { migrationNames, readMigrationsList } from "../../src/store/migrations/migrations-directory.js";
import { MIGRATIONS_PATH } from "../../src/store/migrations/paths.js";
import { PgExecutionStore } from "../../src/store/pg-execution-store.js";
import { createRedisConnection } from "../../src/transport/redis-connection.js";
import { type Anvil, startAnvil } from "../support/anvil.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { newExecution } from "../support/new-execution.js";
import { freePort } from "../support/ports.js";
import { redisUrl } from "../support/redis.js";

/** `tenor doctor`'s checks against a real PostgreSQL, Redis and anvil, each made to fail. */
let db: TestDatabase;
let redis: Redis;
let anvil: Anvil;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = createRedisConnection(redisUrl(), "producer");
  anvil = await startAnvil();
}, 60_000);

afterAll(async () => {
  await anvil?.stop();
  await redis?.quit();
  await db?.drop();
});

describe("doctor checks", () => {
  it("pass on a healthy deployment and name what is wrong on a broken one", async () => {
    const closed = await freePort();
    const config = (chains: unknown[]) =>
      loadConfig({
        env: { DATABASE_URL: db.url, REDIS_URL: redisUrl(), TENOR_CONFIG: "doctor.yaml" },
        readFile: () => JSON.stringify({ chains }),
      });
    const migrations = migrationNames(await readMigrationsList(MIGRATIONS_PATH));
    const healthy = await runDoctorChecks({
      config: config([{ id: anvil.chainId, name: "local", rpcUrls: [anvil.url] }]),
      pool: db.pool,
      redis,
      registry: new WorkflowRegistry([]),
      migrations,
    });
    expect(Object.fromEntries(healthy.map((c) => [c.name, c.status]))).toEqual({
      "redis.maxmemory-policy": "ok",
      "postgresql.settings": "ok",
      "shard-count": "warn",
      migrations: "ok",
      "workflow-registrations": "ok",
      "chain-rpc": "ok",
    });

    await db.pool.query(
      "INSERT INTO engine_settings (key, value) VALUES ('durable.sharding.shardCount', '8')",
    );
    await new PgExecutionStore(db.pool).createExecution(
      newExecution({ workflow: "ghost.flow", workflowVersion: 3 }),
    );
    const broken = await runDoctorChecks({
      config: config([
        { id: anvil.chainId, name: "local", rpcUrls: [anvil.url, `http://127.0.0.1:${closed}`] },
        { id: 5, name: "other", rpcUrls: [anvil.url] },
      ]),
      pool: db.pool,
      redis,
      registry: new WorkflowRegistry([]),
      migrations: [...migrations, "29991231000000_next_release"],
      rpcTimeoutMs: 2_000,
    });
    const detail = Object.fromEntries(broken.map((c) => [c.name, `${c.status}: ${c.detail}`]));
    expect(detail["shard-count"]).toBe(
      "fail: configured 64 but 8 is recorded: every role must use the recorded count",
    );
    expect(detail.migrations).toBe("fail: not applied: 29991231000000_next_release (npm run db:migrate)");
    expect(detail["workflow-registrations"]).toContain("fail: not registered in this build");
    expect(detail["workflow-registrations"]).toContain("ghost.flow@3 (1)");
    expect(detail["chain-rpc"]).toContain(`local 127.0.0.1:${closed} unreachable`);
    expect(detail["chain-rpc"]).toContain(
      `other 127.0.0.1:${anvil.port} answers chain id ${anvil.chainId}, configured 5`,
    );
  }, 60_000);
});
