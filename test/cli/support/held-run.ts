import { z } from "zod";
import { WorkflowRegistry } from "../../../src/engine/registry.js";
import { defineWorkflow } from "../../../src/engine/workflow.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createExecutionClient } from "../../../src/roles/create-execution-client.js";
import { executionJobId, QUEUE_NAMES } from "../../../src/transport/queue-names.js";
import { createRedisConnection } from "../../../src/transport/redis-connection.js";
import { redisUrl } from "../../support/redis.js";
import { eventually } from "../../support/role-process.js";
import type { RolesHarness } from "./roles-harness.js";

/** A release the runner does not have: the runner holds its runs (WORKFLOW_VERSION_UNAVAILABLE) for a minute. */
const future = defineWorkflow({
  name: "demo.asset-issue",
  version: 99,
  input: z.object({}),
  output: z.object({}),
  run: async () => ({}),
});

/**
 * Starts a `demo.asset-issue` run on version 99 in org `demo` and waits until the runner has
 * held it and moved its job to delayed. `turn()` reads its fencing turn: it grows only when a
 * runner takes the run again (after a resume, or the minute's retry).
 */
export async function startHeldRun(h: RolesHarness): Promise<{ id: string; turn(): Promise<number> }> {
  const redis = createRedisConnection(redisUrl(), "producer");
  const side = createExecutionClient({
    pool: h.pool,
    redis,
    prefix: h.prefix,
    registry: new WorkflowRegistry([future]),
    logger: createLogger({ level: "error" }),
  });
  try {
    const { executionId: id } = await side.client.start({ workflow: future.name, input: {}, orgId: "demo" });
    await h.waitFor(
      id,
      (e) => e.status === "suspended" && e.hold?.code === "WORKFLOW_VERSION_UNAVAILABLE",
      "held",
    );
    await eventually("the held job delayed", () => jobDelayed(h, id));
    const turn = async () =>
      Number((await h.pool.query("SELECT turn FROM executions WHERE id = $1", [id])).rows[0].turn);
    return { id, turn };
  } finally {
    await side.close();
    await redis.quit();
  }
}

/** Whether the run's job is parked in BullMQ's delayed set (a held retry, or a wait with a deadline). */
export async function jobDelayed(h: RolesHarness, id: string): Promise<boolean> {
  const redis = createRedisConnection(redisUrl(), "producer");
  try {
    return (await redis.zscore(`${h.prefix}:${QUEUE_NAMES.executions}:delayed`, executionJobId(id))) !== null;
  } finally {
    await redis.quit();
  }
}
