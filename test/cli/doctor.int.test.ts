import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { runDoctorChecks } from "../../src/cli/doctor-checks.js";
import { loadConfig } from "../../src/config/load-config.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { createLogger } from "../../src/observability/logger.js";
import type { ReplicaReport } from "../../src/ownership/replica-directory.js";
import type { ShardDomain } from "../../src/ownership/shard-map.js";
import { ShardOwner } from "../../src/ownership/shard-owner.js";
import { PgReplicaDirectory } from "../../src/ownership/store/pg-replica-directory.js";
import { migrationNames, readMigrationsList } from "../../src/store/migrations/migrations-directory.js";
import { MIGRATIONS_PATH } from "../../src/store/migrations/paths.js";
import { PgExecutionStore } from "../../src/store/pg-execution-store.js";
import { createRedisConnection } from "../../src/transport/redis-connection.js";
import { type Anvil, startAnvil } from "../support/anvil.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { newExecution } from "../support/new-execution.js";
import { freePort } from "../support/ports.js";
import { redisUrl } from "../support/redis.js";

const issue = defineWorkflow({
  name: "doctor.issue",
  version: 2,
  input: z.object({}),
  output: z.object({}),
  run: async () => ({}),
});

/** `tenor doctor`'s checks against a real PostgreSQL, Redis and anvil, each made to fail. */
let db: TestDatabase;
let redis: Redis;
let anvil: Anvil;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = createRedisConnection(redisUrl(), "producer");
  anvil = await startAnvil();
}, 60_000);

const owners: ShardOwner[] = [];

/** A replica of `domain` in this process: its own reserved session, locks and heartbeat. */
async function startReplica(domain: ShardDomain, report?: ReplicaReport): Promise<ShardOwner> {
  const owner = new ShardOwner({
    connectionString: db.url,
    pool: db.pool,
    domain,
    shardCount: 64,
    refreshIntervalMs: 200,
    livenessWindowMs: 1_000,
    logger: createLogger({ level: "error" }),
    ...(report ? { report: () => report } : {}),
  });
  owners.push(owner);
  await owner.start();
  return owner;
}

afterAll(async () => {
  for (const owner of owners) await owner.stop().catch(() => undefined);
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
    const replicas = new PgReplicaDirectory(db.pool, 1_000);
    const runner = await startReplica("runner", { workflows: ["doctor.issue@2"], busy: 0, capacity: 8 });
    const indexer = await startReplica("indexer");
    const healthy = await runDoctorChecks({
      config: config([{ id: anvil.chainId, name: "local", rpcUrls: [anvil.url] }]),
      pool: db.pool,
      redis,
      registry: new WorkflowRegistry([issue]),
      migrations,
      replicas,
    });
    expect(Object.fromEntries(healthy.map((c) => [c.name, c.status]))).toEqual({
      "redis.maxmemory-policy": "ok",
      "postgresql.settings": "ok",
      "shard-count": "warn",
      migrations: "ok",
      "workflow-registrations": "ok",
      "live-runners": "ok",
      "shard-owners": "ok",
      "chain-rpc": "ok",
    });
    const healthyDetail = Object.fromEntries(healthy.map((c) => [c.name, c.detail]));
    expect(healthyDetail["live-runners"]).toBe("1 live runner serves all 1 workflow versions of this build");
    expect(healthyDetail["shard-owners"]).toBe("runner 64/64, indexer 64/64 owned");

    // A runner of an older build: live, but version 2 of doctor.issue has no runner.
    await runner.stop();
    await startReplica("runner", { workflows: ["doctor.issue@1"], busy: 0, capacity: 8 });
    const olderBuild = await runDoctorChecks({
      config: config([]),
      pool: db.pool,
      redis,
      registry: new WorkflowRegistry([issue]),
      migrations,
      replicas,
    });
    const older = Object.fromEntries(olderBuild.map((c) => [c.name, `${c.status}: ${c.detail}`]));
    expect(older["live-runners"]).toBe(
      "fail: no live runner serves doctor.issue@2 (1 live runner): its executions wait until a runner of this build starts",
    );
    expect(older["shard-owners"]).toBe("ok: runner 64/64 owned (no chains configured: no indexer shards)");

    // Every runner gone: nothing advances and nothing owns the runner shards.
    for (const owner of owners) await owner.stop();
    void indexer;

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
      replicas,
    });
    const detail = Object.fromEntries(broken.map((c) => [c.name, `${c.status}: ${c.detail}`]));
    expect(detail["shard-count"]).toBe(
      "fail: configured 64 but 8 is recorded: every role must use the recorded count",
    );
    expect(detail.migrations).toBe("fail: not applied: 29991231000000_next_release (npm run db:migrate)");
    expect(detail["workflow-registrations"]).toContain("fail: not registered in this build");
    expect(detail["workflow-registrations"]).toContain("ghost.flow@3 (1)");
    expect(detail["live-runners"]).toBe(
      "fail: no live runner (none heartbeating within durable.sharding.livenessWindowMs, 10000 ms): no execution advances; start the runner role (DAPI_ROLE=runner)",
    );
    expect(detail["shard-owners"]).toBe(
      "fail: runner shards without an owner: 64 of 64 (0-63); indexer shards without an owner: 64 of 64 (0-63)",
    );
    expect(detail["chain-rpc"]).toContain(`local 127.0.0.1:${closed} unreachable`);
    expect(detail["chain-rpc"]).toContain(
      `other 127.0.0.1:${anvil.port} answers chain id ${anvil.chainId}, configured 5`,
    );
  }, 60_000);
});
