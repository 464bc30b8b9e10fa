import { ALL_ACTIVITIES, ALL_WORKFLOWS } from "../../flows/index.js";
import { createRunnerChainRuntime } from "../chain/chain-role-runtime.js";
import { CHAIN_ENTITIES } from "../chain/nonce-entity.js";
import { ActivityRegistry } from "../engine/activity.js";
import { WorkflowRegistry } from "../engine/registry.js";
import { EntityClient } from "../keyed/entity-client.js";
import { EntityRegistry } from "../keyed/entity-registry.js";
import { startHealthServer } from "../observability/health-server.js";
import { startRoleShardOwner } from "../ownership/role-shard-owner.js";
import { startRunnerLiveness } from "../ownership/runner-liveness.js";
import { createExecutionClient } from "../runtime/create-execution-client.js";
import { assertNoEviction } from "../runtime/redis-connection.js";
import { startRunnerRuntime } from "../runtime/runner-runtime.js";
import type { RoleContext, RoleHandle } from "./role-handle.js";
import { stopOnFailure } from "./stop-on-failure.js";

/** The runner role: workflow workers, schedules, shard ownership; never the public API (DESIGN §1). */
export async function startRunnerRole(ctx: RoleContext): Promise<RoleHandle> {
  // Registration first: before any startup work touches the database or a chain (DESIGN §7).
  const registry = new WorkflowRegistry(ALL_WORKFLOWS);
  registry.assertAllDeclaredRegistered();
  const activities = new ActivityRegistry(ALL_ACTIVITIES);
  activities.assertAllDeclaredRegistered();
  const entities = new EntityRegistry(CHAIN_ENTITIES);
  entities.assertAllDeclaredRegistered();
  await assertNoEviction(ctx.deps.redis, ctx.config.redisUrl);
  // The chain boundary: nonces through the entity, watcher findings delivered as signals.
  const entityClient = new EntityClient({
    pool: ctx.deps.pool,
    redis: ctx.deps.redis,
    prefix: ctx.config.redisPrefix,
    registry: entities,
    logger: ctx.logger,
  });
  const executions = createExecutionClient({
    pool: ctx.deps.pool,
    redis: ctx.deps.redis,
    prefix: ctx.config.redisPrefix,
    registry,
    logger: ctx.logger,
  });
  const chain = createRunnerChainRuntime({
    config: ctx.config,
    secrets: ctx.secrets,
    pool: ctx.deps.pool,
    entities: entityClient,
    executions: executions.client,
    logger: ctx.logger,
  });
  const runtime = await startRunnerRuntime({
    config: ctx.config,
    registry,
    logger: ctx.logger,
    pool: ctx.deps.pool,
    workerRedis: ctx.deps.workerRedis,
    producerRedis: ctx.deps.redis,
    entities,
    activities,
    metrics: ctx.metrics,
  });
  // A failure past this point must not leave workers running: startup may relaunch in process.
  const withWorkers = {
    async stop() {
      await chain.stop();
      await runtime.stop();
      await executions.close();
      await entityClient.close();
    },
  };
  // Liveness: when this process dies, a survivor moves its jobs at once (docs/engine.md).
  const liveness = await stopOnFailure(withWorkers, () =>
    startRunnerLiveness({
      config: ctx.config,
      redis: ctx.deps.redis,
      workers: runtime.workers,
      logger: ctx.logger,
    }),
  );
  const started = {
    async stop() {
      await withWorkers.stop();
      // After the workers closed: unregistered while still locked, so no peer moves a job it finishes.
      await liveness.stop();
    },
  };
  const shards = await stopOnFailure(started, () =>
    startRoleShardOwner({
      config: ctx.config,
      deps: ctx.deps,
      domain: "runner",
      logger: ctx.logger,
      onChange: (owned) => ctx.metrics.shardsOwned.set({ domain: "runner" }, owned.length),
      work: chain.shardWork,
    }),
  );
  const { server } = await stopOnFailure(
    { stop: async () => void (await Promise.allSettled([shards.stop(), started.stop()])) },
    () =>
      startHealthServer({
        port: ctx.config.runner.healthPort,
        checks: ctx.readiness,
        state: ctx.health,
        metrics: ctx.metrics.registry,
      }),
  );
  ctx.logger.info("runner started", {
    workflows: registry.names(),
    healthPort: ctx.config.runner.healthPort,
  });
  return {
    async stop() {
      await shards.stop();
      await started.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
