import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Redis } from "ioredis";
import type { Pool } from "pg";
import type { TenorConfig } from "../config/schema.js";
import { ActivityRegistry } from "../engine/activity.js";
import type { EngineHooks } from "../engine/context.js";
import type { WorkflowRegistry } from "../engine/registry.js";
import { ServiceSet } from "../engine/services.js";
import { TurnRunner } from "../engine/turn-runner.js";
import { EntityRegistry } from "../keyed/entity-registry.js";
import { type KeyedWorkers, startKeyedWorkers } from "../keyed/keyed-workers.js";
import { PgLedgerReads } from "../ledger-index/store/reads.js";
import type { Logger } from "../observability/logger.js";
import type { TenorMetrics } from "../observability/metrics.js";
import { isTracingEnabled } from "../observability/tracing-state.js";
import type { ReplicaReport } from "../ownership/replica-directory.js";
import { startActivityWorkers } from "../runtime/activity-worker.js";
import type { RunnerWorker } from "../runtime/dead-runner-jobs.js";
import { engineMetricsHooks } from "../runtime/engine-metrics.js";
import { ExecutionQueue } from "../runtime/execution-queue.js";
import { ExecutionTracing } from "../runtime/execution-tracing.js";
import { startExecutionWorker } from "../runtime/execution-worker.js";
import { FAILURE_CLASSES } from "../runtime/failure-class.js";
import { TakeoverLog } from "../runtime/takeover-log.js";
import { type RunnerScheduleDependencies, runnerSchedules } from "../schedules/runner-schedules.js";
import type { ScheduleDefinition } from "../schedules/schedule-definition.js";
import { startScheduleService } from "../schedules/schedule-service.js";
import { PgActivityStore } from "../store/pg-activity-store.js";
import { PgExecutionCommands } from "../store/pg-execution-commands.js";
import { PgExecutionQueries } from "../store/pg-execution-queries.js";
import { PgExecutionStore } from "../store/pg-execution-store.js";
import { PgOperations } from "../store/pg-operations.js";
import { heldExecutions } from "../store/pg-sweep-queries.js";
import { PgWaitProbe } from "../store/pg-wait-probe.js";
import { activityQueueName, QUEUE_NAMES } from "../transport/queue-names.js";
import { measuredSchedules, registerRunnerGauges } from "./runner-metrics.js";

export interface RunnerEngineOptions {
  config: TenorConfig;
  registry: WorkflowRegistry;
  /**
   * What the workflows and activities reach outside the journal (src/engine/services.ts), built
   * once from this runner's connections; none when unset.
   */
  services?: ServiceSet;
  logger: Logger;
  pool: Pool;
  /** A connection with `maxRetriesPerRequest: null` for the worker's blocking commands. */
  workerRedis: Redis;
  producerRedis: Redis;
  hooks?: EngineHooks;
  /** Keyed entities this runner handles (src/keyed); none when unset. */
  entities?: EntityRegistry;
  /** Activities this runner works on, each on its own queue (defineActivity); none when unset. */
  activities?: ActivityRegistry;
  /** The application's own schedules, run next to the built-in ones (with `services`); none when unset. */
  schedules?: (deps: RunnerScheduleDependencies & { services: ServiceSet }) => readonly ScheduleDefinition[];
  /** The process's metrics: engine hooks, schedule runs and scrape-time gauges feed it. */
  metrics?: TenorMetrics;
  /**
   * The workflow clock in ms since the epoch: timers, deadlines and `ctx.now()` read it. Default
   * `Date.now`; the test kit (src/testing) passes a clock it can move forward to skip time.
   */
  clock?: () => number;
}

export interface RunnerEngine {
  queue: ExecutionQueue;
  /** Entity workers, the keyed workflow gate and the keyed repair (docs/keyed.md). */
  keyed: KeyedWorkers;
  /**
   * The BullMQ workers whose active jobs a survivor takes back at once when this runner's
   * PostgreSQL session ends (src/ownership/runner-liveness.ts): executions and activities.
   */
  workers: readonly RunnerWorker[];
  /** The workflows this runner serves and its turns in progress, for its heartbeat. */
  report(): ReplicaReport;
  /** Logs the takeover of executions runner liveness moved back from a dead runner. */
  reportTakeover(deadRunner: string, moved: readonly { queue: string; jobIds: string[] }[]): Promise<void>;
  /** Stops the schedules, stops taking jobs, lets running turns finish (bounded by BullMQ's close). */
  stop(): Promise<void>;
}

/**
 * The runner role's engine: the executions worker, the runners' schedules (the convergent sweep,
 * rollups, retention, ...: src/schedules) and the wake-up of held executions. Refuses to start
 * when a declared workflow is not registered, or a registered one declares a service `services`
 * does not provide (docs/architecture.md, "Roles").
 */
export async function startRunnerEngine(options: RunnerEngineOptions): Promise<RunnerEngine> {
  const { config, logger } = options;
  options.registry.assertAllDeclaredRegistered();
  const activities = options.activities ?? new ActivityRegistry([]);
  activities.assertAllDeclaredRegistered();
  const services = options.services ?? ServiceSet.empty;
  services.assertProvides([...options.registry.all(), ...activities.all()]);
  const { metrics } = options;
  // Zero series for every known label value: a rate over a series that does not exist yet is empty,
  // not zero, and an alert on it never fires the first time.
  for (const workflow of options.registry.names())
    for (const failure of FAILURE_CLASSES) metrics?.executionFailures.inc({ workflow, class: failure }, 0);
  metrics?.jobWait.zero({ queue: QUEUE_NAMES.executions });
  const store = new PgExecutionStore(
    options.pool,
    metrics ? { onJournalBatch: (rows) => metrics.journalBatchSize.observe(rows) } : {},
  );
  const measured = metrics ? engineMetricsHooks(metrics, options.hooks) : options.hooks;
  const tracing = isTracingEnabled() ? new ExecutionTracing(options.pool) : undefined;
  const hooks = tracing ? tracing.hooks(measured) : measured;
  const queue = new ExecutionQueue(
    options.producerRedis,
    config.redisPrefix,
    logger.child({ component: "queue" }),
  );
  const turns = new TurnRunner({
    store,
    registry: options.registry,
    services,
    dispatcher: queue,
    recovery: config.durable.recovery,
    logger: logger.child({ component: "engine" }),
    ...(hooks ? { hooks } : {}),
    // A turn that went half a lock window without proving its fence proves it before new work.
    staleFenceMs: config.durable.lock.lockDurationMs / 2,
    maxStoredValueBytes: config.durable.maxStoredValueBytes,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const keyed = await startKeyedWorkers({
    pool: options.pool,
    redis: options.producerRedis,
    prefix: config.redisPrefix,
    entities: options.entities ?? new EntityRegistry([]),
    workflows: options.registry,
    starter: queue,
    logger,
    settings: config.durable.keyed,
  });
  const runnerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const worker = startExecutionWorker({
    connection: options.workerRedis,
    prefix: config.redisPrefix,
    turns,
    store,
    queue,
    logger: logger.child({ component: "runner" }),
    concurrency: config.durable.runnerConcurrency,
    runnerId,
    lockDurationMs: config.durable.lock.lockDurationMs,
    stalledIntervalMs: config.durable.lock.stalledIntervalMs,
    ...(tracing ? { tracing } : {}),
    ...(metrics ? { metrics } : {}),
    onTerminal: keyedTerminalHook(options.registry, keyed),
    waits: new PgWaitProbe(options.pool),
  });
  const takeovers = new TakeoverLog({
    worker,
    redis: options.producerRedis,
    queueKey: queue.queue.qualifiedName,
    pool: options.pool,
    runnerId,
    logger: logger.child({ component: "sweep" }),
    stalledIntervalMs: config.durable.lock.stalledIntervalMs,
  });
  const activityWorkers = startActivityWorkers({
    connection: options.workerRedis,
    prefix: config.redisPrefix,
    registry: activities,
    services,
    store: new PgActivityStore(options.pool),
    maxStoredValueBytes: config.durable.maxStoredValueBytes,
    logger: logger.child({ component: "runner" }),
    lockDurationMs: config.durable.lock.lockDurationMs,
    stalledIntervalMs: config.durable.lock.stalledIntervalMs,
    wake: (executionId) => queue.wake(executionId),
    ...(tracing ? { tracing } : {}),
    ...(metrics ? { metrics } : {}),
  });
  const ledgerReads = new PgLedgerReads(options.pool);
  const scheduleDeps: RunnerScheduleDependencies = {
    config,
    pool: options.pool,
    redis: options.producerRedis,
    executionQueue: queue,
    retainedQueues: () => [queue.queue, schedules.queue],
    logger,
    waitProbe: new PgWaitProbe(options.pool),
    ledgerHealth: () => ledgerReads.health(),
    workflows: options.registry,
    operationStores: {
      operations: new PgOperations(options.pool),
      commands: new PgExecutionCommands(options.pool),
      signals: new PgExecutionQueries(options.pool),
    },
  };
  const definitions = [
    ...runnerSchedules(scheduleDeps),
    ...(options.schedules?.({ ...scheduleDeps, services }) ?? []),
  ];
  const schedules = await startScheduleService({
    definitions: metrics ? measuredSchedules(metrics, definitions) : definitions,
    pool: options.pool,
    redis: options.producerRedis,
    workerRedis: options.workerRedis,
    prefix: config.redisPrefix,
    logger,
    runnerId,
    lockDurationMs: config.durable.lock.lockDurationMs,
    stalledIntervalMs: config.durable.lock.stalledIntervalMs,
  });
  await wakeHeldExecutions(options.pool, queue, logger);
  const gauges = metrics
    ? registerRunnerGauges(metrics, {
        pool: options.pool,
        redis: options.producerRedis,
        prefix: config.redisPrefix,
        overdueGraceMs: config.durable.sweep.intervalMs + config.durable.sweep.graceMs,
        livenessWindowMs: config.durable.sharding.livenessWindowMs,
        queueNames: [
          QUEUE_NAMES.executions,
          QUEUE_NAMES.schedules,
          ...activities.queues().map((q) => activityQueueName(q.options.name)),
        ],
      })
    : undefined;
  const served = options.registry.all().map((w) => `${w.name}@${w.version}`);
  return {
    queue,
    keyed,
    workers: [worker, ...activityWorkers].map((w) => ({ queue: w.qualifiedName, worker: w.id })),
    report: () => ({
      workflows: served,
      busy: worker.jobsInProgress,
      capacity: config.durable.runnerConcurrency,
    }),
    reportTakeover: (deadRunner, moved) => takeovers.reportReclaimed(deadRunner, moved),
    async stop() {
      await schedules.stop();
      // Turns drain before the keyed workers stop: a turn in flight may be waiting on a keyed
      // reply (a nonce reservation), which only a running entity worker can give it.
      await worker.close();
      await Promise.all(activityWorkers.map((w) => w.close()));
      await keyed.stop();
      await takeovers.stop();
      await queue.close();
      await gauges?.close();
    },
  };
}

/**
 * Executions held for non-determinism (or an unknown workflow) are retried at once when a runner
 * starts: a new deployment is exactly when their code may have been fixed.
 */
async function wakeHeldExecutions(pool: Pool, queue: ExecutionQueue, logger: Logger): Promise<void> {
  const rows = await heldExecutions(pool, 10_000);
  for (const row of rows) await queue.wake(row.id, row.workflow);
  if (rows.length > 0)
    logger.info("woke held executions for a retry with this release", { count: rows.length });
}

/**
 * Frees a keyed workflow's slot when its execution is terminal. Jobs named after an unkeyed
 * workflow cost nothing; a job added under another name (a wake) is checked in PostgreSQL.
 */
function keyedTerminalHook(
  registry: WorkflowRegistry,
  keyed: KeyedWorkers,
): ((executionId: string, jobName: string) => Promise<void>) | undefined {
  const keyedNames = new Set(registry.names().filter((name) => registry.get(name).key));
  if (keyedNames.size === 0) return undefined;
  return async (executionId, jobName) => {
    if (keyedNames.has(jobName)) await keyed.gate.finished(executionId);
    else if (!registry.has(jobName)) await keyed.gate.finishedIfAdmitted(executionId);
  };
}
