import type { Redis } from "ioredis";
import type { Pool } from "pg";
import type { ExecutionClient } from "../../../src/engine/execution-client.js";
import { WorkflowRegistry } from "../../../src/engine/registry.js";
import type { AnyWorkflow } from "../../../src/engine/workflow.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createExecutionClient } from "../../../src/roles/create-execution-client.js";
import { createPgPool } from "../../../src/store/pg-pool.js";
import { createRedisConnection } from "../../../src/transport/redis-connection.js";
import { ANVIL_KEYS, type Anvil, startAnvil } from "../../support/anvil.js";
import { writeTestConfig } from "../../support/config-file.js";
import type { TestDatabase } from "../../support/database.js";
import type { FastEntry } from "../../support/fast-entry.js";
import { killAllProcesses, type TestProcess } from "../../support/processes.js";
import { startFixtureRunner } from "../../support/role-process.js";
import { createTestStores } from "../../support/test-stores.js";

/**
 * One crash test file's world: a real anvil, the file's own database and Redis prefix, a
 * configuration for runner processes (the anvil chain, the local signer `hot` of organisation
 * `acme`, short lock and sweep windows so a killed runner's work moves quickly), and an execution
 * client in the test process to start and read executions. The runners themselves are real
 * processes the test spawns, kills and replaces (`startRunner`).
 */
export interface CrashWorld {
  anvil: Anvil;
  db: TestDatabase;
  pool: Pool;
  client: ExecutionClient;
  /** A scratch directory for the configuration and the crash markers. */
  dir: string;
  /** Spawns `fixture` (a path from the repository root) with the world's environment plus `env`. */
  startRunner(name: string, fixture: FastEntry, env?: Record<string, string>): Promise<TestProcess>;
  stop(): Promise<void>;
}

export async function startCrashWorld(options: {
  file: string;
  /** Workflows the test process starts and reads (the runners register the whole application). */
  workflows: readonly AnyWorkflow[];
  /** More configuration for the runners, given the started anvil (asset templates, ...). */
  config?: (anvil: Anvil) => Promise<Record<string, unknown>> | Record<string, unknown>;
}): Promise<CrashWorld> {
  const anvil = await startAnvil();
  const stores = await createTestStores(options.file);
  const { db, prefix } = stores;
  const config = writeTestConfig("crash", {
    durable: {
      lock: { lockDurationMs: 1_000, stalledIntervalMs: 500 },
      sweep: { intervalMs: 500, graceMs: 1_000 },
    },
    chains: [
      { id: anvil.chainId, name: "anvil", rpcUrls: [anvil.url], confirmationWatcher: { intervalMs: 50 } },
    ],
    signers: [{ id: "hot", kind: "local", orgId: "acme", privateKey: { env: "CRASH_SIGNER_KEY" } }],
    ...(await options.config?.(anvil)),
  });
  const env = { ...stores.env, TENOR_CONFIG: config.file, CRASH_SIGNER_KEY: ANVIL_KEYS[1] };
  const pool = createPgPool(db.url, { applicationName: "crash-test", max: 4 });
  const redis: Redis = createRedisConnection(stores.redisUrl, "producer");
  const side = createExecutionClient({
    pool,
    redis,
    prefix,
    registry: new WorkflowRegistry(options.workflows),
    logger: createLogger({ level: "error" }),
  });
  return {
    anvil,
    db,
    pool,
    client: side.client,
    dir: config.dir,
    async startRunner(name, fixture, extra) {
      return startFixtureRunner(name, fixture, { ...env, ...extra });
    },
    async stop() {
      await killAllProcesses();
      await side.close().catch(() => undefined);
      redis.disconnect();
      await pool.end();
      await stores.drop();
      await anvil.stop();
    },
  };
}
