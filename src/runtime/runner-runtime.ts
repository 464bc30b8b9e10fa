import type { Redis } from "ioredis";
import type { Pool } from "pg";
import type { TenorConfig } from "../config/schema.js";
import type { EngineHooks } from "../engine/context.js";
import type { WorkflowRegistry } from "../engine/registry.js";
import { TurnRunner } from "../engine/turn-runner.js";
import type { Logger } from "../observability/logger.js";
import { PgExecutionStore } from "../store/pg-execution-store.js";
import { ExecutionQueue } from "./execution-queue.js";
import { startSweepLoop } from "./execution-sweep.js";
import { startExecutionWorker } from "./execution-worker.js";

export interface RunnerRuntimeOptions {
  config: TenorConfig;
  registry: WorkflowRegistry;
  logger: Logger;
  pool: Pool;
  /** A connection with `maxRetriesPerRequest: null` for the worker's blocking commands. */
  workerRedis: Redis;
  producerRedis: Redis;
  hooks?: EngineHooks;
}

export interface RunnerRuntime {
  queue: ExecutionQueue;
  /** Stops taking jobs, lets running turns finish (bounded by BullMQ's close), stops the sweep. */
  stop(): Promise<void>;
}

/**
 * The runner role's engine: the executions worker, the convergent sweep and the wake-up of held
 * executions. Refuses to start when a declared workflow is not registered (DESIGN §7).
 */
export async function startRunnerRuntime(options: RunnerRuntimeOptions): Promise<RunnerRuntime> {
  const { config, logger } = options;
  options.registry.assertAllDeclaredRegistered();
  const store = new PgExecutionStore(options.pool);
  const queue = new ExecutionQueue(
    options.producerRedis,
    config.redisPrefix,
    logger.child({ component: "queue" }),
  );
  const turns = new TurnRunner({
    store,
    registry: options.registry,
    dispatcher: queue,
    recovery: config.durable.recovery,
    logger: logger.child({ component: "engine" }),
    ...(options.hooks ? { hooks: options.hooks } : {}),
  });
  const worker = startExecutionWorker({
    connection: options.workerRedis,
    prefix: config.redisPrefix,
    turns,
    store,
    queue,
    logger: logger.child({ component: "runner" }),
    concurrency: config.durable.runnerConcurrency,
    lockDurationMs: config.durable.lock.lockDurationMs,
    stalledIntervalMs: config.durable.lock.stalledIntervalMs,
  });
  const sweepOptions = {
    pool: options.pool,
    redis: options.producerRedis,
    queue,
    logger: logger.child({ component: "sweep" }),
    graceMs: config.durable.sweep.graceMs,
    intervalMs: config.durable.sweep.intervalMs,
  };
  const sweep = startSweepLoop(sweepOptions);
  await wakeHeldExecutions(options.pool, queue, logger);
  return {
    queue,
    async stop() {
      await sweep.stop();
      await worker.close();
      await queue.close();
    },
  };
}

/**
 * Executions held for non-determinism (or an unknown workflow) are retried at once when a runner
 * starts: a new deployment is exactly when their code may have been fixed.
 */
async function wakeHeldExecutions(pool: Pool, queue: ExecutionQueue, logger: Logger): Promise<void> {
  const { rows } = await pool.query<{ id: string; workflow: string }>(
    "SELECT id, workflow FROM executions WHERE hold IS NOT NULL AND status = 'suspended' LIMIT 10000",
  );
  for (const row of rows) await queue.wake(row.id, row.workflow);
  if (rows.length > 0)
    logger.info("woke held executions for a retry with this release", { count: rows.length });
}
