import type { Redis } from "ioredis";
import type { Pool } from "pg";
import { loadConfig } from "../../src/config/load-config.js";
import type { TenorConfig } from "../../src/config/schema.js";
import { ActivityRegistry, type AnyActivity } from "../../src/engine/activity.js";
import type { EngineHooks } from "../../src/engine/context.js";
import type { ExecutionClient, ExecutionView } from "../../src/engine/execution-client.js";
import type { ExecutionStatus } from "../../src/engine/execution-store.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { type ServiceProvision, ServiceSet } from "../../src/engine/services.js";
import type { AnyWorkflow } from "../../src/engine/workflow.js";
import type { AnyEntity } from "../../src/keyed/entity.js";
import { EntityRegistry } from "../../src/keyed/entity-registry.js";
import { createLogger, type Logger } from "../../src/observability/logger.js";
import type { TenorMetrics } from "../../src/observability/metrics.js";
import { createExecutionClient } from "../../src/roles/create-execution-client.js";
import { type RunnerEngine, startRunnerEngine } from "../../src/roles/runner-engine.js";
import { PgExecutionStore } from "../../src/store/pg-execution-store.js";
import { createPgPool } from "../../src/store/pg-pool.js";
import { createRedisConnection } from "../../src/transport/redis-connection.js";
import type { TestDatabase } from "./database.js";
import { createTestStores } from "./test-stores.js";

/** `durable.*` settings a test file may shrink (lock, sweep, recovery); merged over the harness defaults. */
export interface DurableOverrides {
  lock?: { lockDurationMs?: number; stalledIntervalMs?: number };
  recovery?: { maxAttempts?: number; maxDurationMs?: number; baseDelayMs?: number; maxDelayMs?: number };
  sweep?: { intervalMs?: number; graceMs?: number };
  runnerConcurrency?: number;
}

export interface EngineHarnessOptions {
  /** `import.meta.url` of the test file: names its Redis prefix. */
  file: string;
  /** Every workflow the test file defines (the runner refuses to start otherwise). */
  workflows: readonly AnyWorkflow[];
  durable?: DurableOverrides;
  hooks?: EngineHooks;
  /** Every activity the test file defines, worked on by the engine on their own queues. */
  activities?: readonly AnyActivity[];
  /** Keyed entities the engine handles (the nonce entity, ...). */
  entities?: readonly AnyEntity[];
  /** The process metrics the engine feeds (none when unset). */
  metrics?: TenorMetrics;
  /**
   * The services the workflows and activities declare, built once over the harness's connections
   * (as a runner builds its own); the engine refuses to start without a declared one.
   */
  services?: (connections: HarnessConnections) => readonly ServiceProvision[];
}

/** What a test's services are built over: the engine's own connections. */
export interface HarnessConnections {
  pool: Pool;
  config: TenorConfig;
  producerRedis: Redis;
  logger: Logger;
}

/**
 * A runner engine and an execution client in the test process, on a database and a Redis
 * prefix of the test file's own. Also offers a `side_effects` table so workflows can count how
 * often their step bodies really ran.
 */
export interface EngineHarness {
  db: TestDatabase;
  /** The engine's pool (the runner engine's and the client's), separate from `db.pool`. */
  pool: Pool;
  config: TenorConfig;
  client: ExecutionClient;
  store: PgExecutionStore;
  registry: WorkflowRegistry;
  /** The services the engine provides (EngineHarnessOptions.services). */
  services: ServiceSet;
  logger: Logger;
  /** Redis connections the engine uses (producer: bounded retries; worker: blocking). */
  producerRedis: Redis;
  workerRedis: Redis;
  /** The running runner engine; replaced by {@link EngineHarness.restartRunner}. */
  runner(): RunnerEngine;
  /** Stops the engine and starts a fresh one (a new deployment: held executions are woken). */
  restartRunner(): Promise<void>;
  /** Adds 1 to the side-effect counter `key` and returns the new count. */
  recordEffect(key: string): Promise<number>;
  /** Current value of the side-effect counter `key` (0 when never recorded). */
  effectCount(key: string): Promise<number>;
  /** Polls the status projection until its status is `status`; throws with the last view on timeout. */
  waitForStatus(id: string, status: ExecutionStatus, timeoutMs?: number): Promise<ExecutionView>;
  /** Polls the status projection until `predicate` holds; throws with the last view on timeout. */
  waitForView(
    id: string,
    predicate: (view: ExecutionView) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<ExecutionView>;
  stop(): Promise<void>;
}

const DEFAULT_DURABLE = {
  lock: { lockDurationMs: 2_000, stalledIntervalMs: 1_000 },
  recovery: { maxAttempts: 10, maxDurationMs: 600_000, baseDelayMs: 50, maxDelayMs: 500 },
  sweep: { intervalMs: 500, graceMs: 2_000 },
  runnerConcurrency: 50,
};

/** Default bound of the `waitFor*` helpers, in ms. */
const DEFAULT_WAIT_MS = 20_000;

/** Starts the harness; call in `beforeAll` and `stop()` in `afterAll`. */
export async function startEngineHarness(options: EngineHarnessOptions): Promise<EngineHarness> {
  const stores = await createTestStores(options.file);
  const { db, prefix } = stores;
  const durable = {
    lock: { ...DEFAULT_DURABLE.lock, ...options.durable?.lock },
    recovery: { ...DEFAULT_DURABLE.recovery, ...options.durable?.recovery },
    sweep: { ...DEFAULT_DURABLE.sweep, ...options.durable?.sweep },
    runnerConcurrency: options.durable?.runnerConcurrency ?? DEFAULT_DURABLE.runnerConcurrency,
  };
  const config = loadConfig({
    env: { ...stores.env, TENOR_CONFIG: "engine-harness.yaml" },
    // JSON is YAML: the file the config loader reads is this document.
    readFile: () => JSON.stringify({ durable }),
  });
  await db.pool.query(
    "CREATE TABLE IF NOT EXISTS side_effects (key text PRIMARY KEY, count int NOT NULL DEFAULT 0)",
  );
  const logger = createLogger({ level: "warn" });
  const pool = createPgPool(config.databaseUrl, { applicationName: "tenor-engine-test", max: 20 });
  const producerRedis: Redis = createRedisConnection(config.redisUrl, "producer");
  const workerRedis: Redis = createRedisConnection(config.redisUrl, "worker");
  const registry = new WorkflowRegistry(options.workflows);
  const services = new ServiceSet(options.services?.({ pool, config, producerRedis, logger }) ?? []);
  const startEngine = () =>
    startRunnerEngine({
      config,
      registry,
      services,
      logger,
      pool,
      workerRedis,
      producerRedis,
      ...(options.hooks ? { hooks: options.hooks } : {}),
      activities: new ActivityRegistry(options.activities ?? []),
      ...(options.entities ? { entities: new EntityRegistry(options.entities) } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
    });
  let engine: RunnerEngine;
  try {
    engine = await startEngine();
  } catch (error) {
    // A refused start (an unregistered workflow, a missing service) leaves nothing open behind it.
    await Promise.allSettled([producerRedis.quit(), workerRedis.quit(), pool.end()]);
    await db.drop();
    throw error;
  }
  const clientSide = createExecutionClient({ pool, redis: producerRedis, prefix, registry, logger });
  const client = clientSide.client;

  const waitForView: EngineHarness["waitForView"] = async (id, predicate, what, timeoutMs) => {
    const deadline = Date.now() + (timeoutMs ?? DEFAULT_WAIT_MS);
    let last: ExecutionView | null = null;
    for (;;) {
      last = await client.view(id);
      if (predicate(last)) return last;
      if (Date.now() >= deadline) {
        throw new Error(`execution ${id} did not reach ${what}; last view: ${JSON.stringify(last)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };

  let stopped = false;
  return {
    db,
    pool,
    config,
    client,
    store: new PgExecutionStore(pool),
    registry,
    services,
    logger,
    producerRedis,
    workerRedis,
    runner: () => engine,
    async restartRunner() {
      await engine.stop();
      engine = await startEngine();
    },
    async recordEffect(key) {
      const { rows } = await db.pool.query<{ count: number }>(
        `INSERT INTO side_effects (key, count) VALUES ($1, 1)
         ON CONFLICT (key) DO UPDATE SET count = side_effects.count + 1 RETURNING count`,
        [key],
      );
      return rows[0]?.count ?? 0;
    },
    async effectCount(key) {
      const { rows } = await db.pool.query<{ count: number }>(
        "SELECT count FROM side_effects WHERE key = $1",
        [key],
      );
      return rows[0]?.count ?? 0;
    },
    waitForView,
    waitForStatus: (id, status, timeoutMs) =>
      waitForView(
        id,
        (view) => {
          if (view.status === status) return true;
          // A terminal status never changes again: fail now rather than at the timeout.
          if (view.status === "completed" || view.status === "failed") {
            throw new Error(`execution ${id} ended ${view.status}, not ${status}: ${JSON.stringify(view)}`);
          }
          return false;
        },
        `status ${status}`,
        timeoutMs,
      ),
    async stop() {
      if (stopped) return;
      stopped = true;
      await engine.stop().catch(() => undefined);
      await clientSide.close().catch(() => undefined);
      await Promise.allSettled([producerRedis.quit(), workerRedis.quit(), pool.end()]);
      await stores.drop();
    },
  };
}
