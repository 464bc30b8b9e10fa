import type { Redis } from "ioredis";
import type { Pool } from "pg";
import { ExecutionClient } from "../engine/execution-client.js";
import type { WorkflowRegistry } from "../engine/registry.js";
import { KeyedWorkflowGate } from "../keyed/keyed-workflow-gate.js";
import type { Logger } from "../observability/logger.js";
import { ExecutionQueue } from "../runtime/execution-queue.js";
import { PgExecutionQueries } from "../store/pg-execution-queries.js";
import { PgExecutionStore } from "../store/pg-execution-store.js";

/** Wires the client to PostgreSQL and the executions queue; `close` releases the queue only. */
export function createExecutionClient(options: {
  pool: Pool;
  redis: Redis;
  prefix: string;
  registry: WorkflowRegistry;
  logger: Logger;
}): { client: ExecutionClient; queue: ExecutionQueue; close(): Promise<void> } {
  const queue = new ExecutionQueue(
    options.redis,
    options.prefix,
    options.logger.child({ component: "queue" }),
  );
  const client = new ExecutionClient({
    registry: options.registry,
    store: new PgExecutionStore(options.pool),
    queries: new PgExecutionQueries(options.pool),
    transport: queue,
    keys: new KeyedWorkflowGate({
      pool: options.pool,
      redis: options.redis,
      prefix: options.prefix,
      starter: queue,
      logger: options.logger.child({ component: "queue" }),
    }),
  });
  return { client, queue, close: () => queue.close() };
}
