import type { Server } from "node:http";
import { ALL_WORKFLOWS } from "../../flows/index.js";
import { createApiApp } from "../api/server.js";
import { WorkflowRegistry } from "../engine/registry.js";
import { createExecutionClient } from "../runtime/create-execution-client.js";
import { PgApiKeys } from "../store/pg-api-keys.js";
import { PgApprovals } from "../store/pg-approvals.js";
import { PgExecutionReads } from "../store/pg-execution-reads.js";
import type { RoleContext, RoleHandle } from "./role-handle.js";

/**
 * The api role: the Platform API (src/api) with /livez and /readyz on the same port. It starts
 * executions and delivers signals but never runs workflow code (DESIGN §1).
 */
export async function startApiRole(ctx: RoleContext): Promise<RoleHandle> {
  // Registration first: the API validates inputs with the workflows' own schemas.
  const registry = new WorkflowRegistry(ALL_WORKFLOWS);
  const { pool, redis } = ctx.deps;
  const execution = createExecutionClient({
    pool,
    redis,
    prefix: ctx.config.redisPrefix,
    registry,
    logger: ctx.logger,
  });
  const app = createApiApp({
    settings: ctx.config.api,
    registry,
    client: execution.client,
    transport: execution.queue,
    queues: [execution.queue.queue],
    pool,
    reads: new PgExecutionReads(pool),
    approvals: new PgApprovals(pool),
    keys: new PgApiKeys(pool),
    logger: ctx.logger,
    readiness: ctx.readiness,
    health: ctx.health,
  });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(ctx.config.api.port, (error?: Error) => (error ? reject(error) : resolve(s)));
  });
  ctx.logger.info("api started", { port: ctx.config.api.port, workflows: registry.names() });
  return {
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Long `Prefer: wait` requests and keep-alive sockets must not outlive the grace period.
        server.closeIdleConnections();
      });
      await execution.close();
    },
  };
}
