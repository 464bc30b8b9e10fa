import type { Redis } from "ioredis";
import type { Pool } from "pg";
import type { WorkflowRegistry } from "../engine/registry.js";
import type { Logger } from "../observability/logger.js";
import { KEYED_SPACES } from "../transport/queue-names.js";
import type { EntityRegistry } from "./entity-registry.js";
import { type EntityWorkers, startEntityWorkers } from "./entity-worker.js";
import { KeyedLanes } from "./keyed-lanes.js";
import { KeyedRepair, type KeyedRepairReport, startKeyedRepairLoop } from "./keyed-repair.js";
import { type ExecutionStarter, KeyedWorkflowGate } from "./keyed-workflow-gate.js";

/** `durable.keyed` in the configuration (src/config/schema.ts). */
export interface KeyedSettings {
  /** Lease of a claimed entity command, in ms; a dead runner's commands return after about this long. */
  leaseMs: number;
  /** Most commands one claim takes. */
  batchSize: number;
  /** Claim loops per runner process. */
  concurrency: number;
  /** Period of the convergent repair, in ms. */
  repairIntervalMs: number;
  /** Work younger than this is left alone by the repair, in ms. */
  graceMs: number;
}

export interface KeyedWorkersOptions {
  pool: Pool;
  /** Producer connection (bounded retries); Lua calls and reply publishing use it. */
  redis: Redis;
  prefix: string;
  entities: EntityRegistry;
  workflows: WorkflowRegistry;
  /** Adds a keyed execution's job once it is promoted: the executions queue. */
  starter: ExecutionStarter;
  logger: Logger;
  settings: KeyedSettings;
}

export interface KeyedWorkers {
  gate: KeyedWorkflowGate;
  workers: EntityWorkers;
  /** One repair pass now (tests and the operator); the loop runs them on its own. */
  repair(): Promise<KeyedRepairReport>;
  stop(): Promise<void>;
}

/**
 * The runner's part of keyed serialization: entity workers, the keyed workflow gate and the
 * repair loop. A first repair pass runs before the workers start, so a fresh or flushed Redis is
 * rebuilt from PostgreSQL before any command is claimed.
 */
export async function startKeyedWorkers(options: KeyedWorkersOptions): Promise<KeyedWorkers> {
  options.entities.assertAllDeclaredRegistered();
  const gate = new KeyedWorkflowGate({
    pool: options.pool,
    redis: options.redis,
    prefix: options.prefix,
    starter: options.starter,
    logger: options.logger.child({ component: "queue" }),
  });
  const repair = new KeyedRepair({
    pool: options.pool,
    entityLanes: new KeyedLanes(options.redis, options.prefix, KEYED_SPACES.entities, true),
    gate,
    logger: options.logger.child({ component: "sweep" }),
    graceMs: options.settings.graceMs,
    workflowKeyLimit: (workflow) =>
      options.workflows.has(workflow) ? (options.workflows.get(workflow).keyLimit ?? 1) : 1,
  });
  await repair.pass();
  const workers = startEntityWorkers({
    pool: options.pool,
    redis: options.redis,
    prefix: options.prefix,
    registry: options.entities,
    logger: options.logger.child({ component: "runner" }),
    leaseMs: options.settings.leaseMs,
    batchSize: options.settings.batchSize,
    concurrency: options.settings.concurrency,
  });
  const loop = startKeyedRepairLoop(
    repair,
    options.settings.repairIntervalMs,
    options.logger.child({ component: "sweep" }),
  );
  return {
    gate,
    workers,
    repair: () => repair.pass(),
    async stop() {
      await loop.stop();
      await workers.stop();
    },
  };
}
