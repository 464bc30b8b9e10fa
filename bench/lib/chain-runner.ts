import type { Pool } from "pg";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { createLogger } from "../../src/observability/logger.js";
import { createExecutionClient } from "../../src/roles/create-execution-client.js";
import { createRedisConnection } from "../../src/transport/redis-connection.js";
import type { WorkloadContext } from "../workloads/types.js";
import { DeployedRole, type DeployedRoleOptions, untilShardsOwned } from "./deployed-roles.js";

/** A deployed runner that owns every shard, and the bench's client that starts chain transactions. */
export interface ChainRunner {
  runner: DeployedRole;
  pool: Pool;
  /** Starts one `chain.transaction` of organisation `bench`. */
  startTransfer(input: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Spawns the compiled runner role (the chain workloads' Tenor as deployed) and resolves once it
 * owns all `shardCount` shards: its confirmation watcher examines only executions of shards it owns.
 */
export async function startChainRunner(
  ctx: WorkloadContext,
  options: Omit<DeployedRoleOptions, "role" | "redisUrl">,
  shardCount: number,
): Promise<ChainRunner> {
  const runner = await DeployedRole.spawn({ ...options, role: "runner", redisUrl: ctx.env.redisUrl });
  try {
    await untilShardsOwned([runner], shardCount);
  } catch (error) {
    await runner.stop();
    throw error;
  }
  // Imported here, not at the top: a workflow declared in this process makes the in-process
  // runners of the other workloads refuse to start, and the chain workloads run last.
  const { chainTransaction } = await import("../../src/chain/lifecycle/transaction-workflow.js");
  const pool = ctx.env.pool(options.databaseUrl, 4);
  const redis = createRedisConnection(ctx.env.redisUrl, "producer");
  const executions = createExecutionClient({
    pool,
    redis,
    prefix: options.prefix,
    registry: new WorkflowRegistry([chainTransaction]),
    logger: createLogger({ level: "error" }),
  });
  return {
    runner,
    pool,
    startTransfer: (input) =>
      executions.client.start({ workflow: chainTransaction.name, input, orgId: "bench" }),
    async close() {
      await executions.close().catch(() => undefined);
      redis.disconnect();
      await pool.end().catch(() => undefined);
      await runner.stop();
    },
  };
}
