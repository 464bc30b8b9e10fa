import type { Redis } from "ioredis";
import type { Pool } from "pg";
import { ExecutionClient } from "../engine/execution-client.js";
import type { WorkflowRegistry } from "../engine/registry.js";
import { KeyedWorkflowGate } from "../keyed/keyed-workflow-gate.js";
import type { Logger } from "../observability/logger.js";
import { FinishedExecutionListener } from "../runtime/execution-finished.js";
import { ExecutionQueue } from "../runtime/execution-queue.js";
import { PgExecutionQueries } from "../store/pg-execution-queries.js";
import { PgExecutionStore } from "../store/pg-execution-store.js";

/**
 * Wires the client to PostgreSQL, the executions queue and the runners' finished notifications
 * (subscribed on the first wait only); `close` releases the queue and the subscription.
 */
export function createExecutionClient(options: {
  pool: Pool;
  redis: Redis;
  prefix: string;
  registry: WorkflowRegistry;
  logger: Logger;
  /** Re-read interval of a wait for a finished execution, in ms, should a notification be lost. */
  waitFallbackPollMs?: number;
}): {
  client: ExecutionClient;
  queue: ExecutionQueue;
  /** The gate keyed starts go through (docs/keyed.md, "Keyed workflows"). */
  keys: KeyedWorkflowGate;
  close(): Promise<void>;
} {
  const queue = new ExecutionQueue(
    options.redis,
    options.prefix,
    options.logger.child({ component: "queue" }),
  );
  const finished = new FinishedExecutionListener(
    options.redis,
    options.prefix,
    options.logger.child({ component: "queue" }),
  );
  const keys = new KeyedWorkflowGate({
    pool: options.pool,
    redis: options.redis,
    prefix: options.prefix,
    starter: queue,
    logger: options.logger.child({ component: "queue" }),
  });
  const client = new ExecutionClient({
    finished,
    ...(options.waitFallbackPollMs !== undefined ? { fallbackPollMs: options.waitFallbackPollMs } : {}),
    registry: options.registry,
    store: new PgExecutionStore(options.pool),
    queries: new PgExecutionQueries(options.pool),
    transport: queue,
    keys,
  });
  return {
    client,
    queue,
    keys,
    close: async () => {
      await finished.close();
      await queue.close();
    },
  };
}
