import { createRunnerChainBoundary } from "../chain/runner-chain-boundary.js";
import { ActivityRegistry } from "../engine/activity.js";
import { WorkflowRegistry } from "../engine/registry.js";
import { ServiceSet } from "../engine/services.js";
import { EntityClient } from "../keyed/entity-client.js";
import { EntityRegistry } from "../keyed/entity-registry.js";
import { PgLedgerReads } from "../ledger-index/store/reads.js";
import { startHealthServer } from "../observability/health-server.js";
import { startRunnerLiveness } from "../ownership/runner-liveness.js";
import { assertNoEviction } from "../transport/redis-connection.js";
import { resealWebhookSecrets } from "../webhooks/reseal-secrets.js";
import { loadWebhookSecretKeyring } from "../webhooks/secret-keyring.js";
import { PgWebhookDispatch } from "../webhooks/store/pg-webhook-dispatch.js";
import { PgWebhookSecrets } from "../webhooks/store/pg-webhook-secrets.js";
import { startWebhookDispatcher } from "../webhooks/webhook-dispatcher.js";
import type { Application } from "./application.js";
import { createExecutionClient } from "./create-execution-client.js";
import type { RoleContext, RoleHandle } from "./role-handle.js";
import { startRoleShardOwner } from "./role-shard-owner.js";
import { startRunnerEngine } from "./runner-engine.js";
import { stopOnFailure } from "./stop-on-failure.js";

/**
 * The runner role: workflow workers, schedules, shard ownership; never the public API
 * (docs/architecture.md, "Roles").
 */
export async function startRunnerRole(ctx: RoleContext, app: Application): Promise<RoleHandle> {
  // The health port before any work: a port in use ends the start at once (PORT_UNAVAILABLE, not
  // retried), and no turn runs on a runner that cannot be probed. /readyz says `starting` meanwhile.
  const { server } = await startHealthServer({
    port: ctx.config.runner.healthPort,
    portSetting: "TENOR_RUNNER_HEALTH_PORT",
    checks: ctx.readiness,
    state: ctx.health,
    metrics: ctx.metrics.registry,
  });
  const closeHealth = () => new Promise<void>((resolve) => server.close(() => resolve()));
  const work = await stopOnFailure({ stop: closeHealth }, () => startRunnerWork(ctx, app));
  ctx.logger.info("runner started", {
    workflows: app.workflows.map((w) => w.name),
    healthPort: ctx.config.runner.healthPort,
  });
  return {
    async stop() {
      await work.stop();
      await closeHealth();
    },
  };
}

/** Everything the runner runs, started once its health port is bound. */
async function startRunnerWork(ctx: RoleContext, app: Application): Promise<RoleHandle> {
  // Registration first: before any startup work touches the database or a chain
  // (docs/architecture.md, "Roles").
  const registry = new WorkflowRegistry(app.workflows);
  registry.assertAllDeclaredRegistered();
  const activities = new ActivityRegistry(app.activities);
  activities.assertAllDeclaredRegistered();
  const entities = new EntityRegistry(app.entities);
  entities.assertAllDeclaredRegistered();
  // A webhook secret key that cannot be read refuses the start (a configuration error).
  const webhookKeys = loadWebhookSecretKeyring(ctx.config.webhooks, ctx.secrets);
  await assertNoEviction(ctx.deps.redis, ctx.config.redisUrl);
  // Before the dispatcher: secrets in plain text or under an older key move to the first key.
  const resealed = await resealWebhookSecrets({
    secrets: new PgWebhookSecrets(ctx.deps.pool),
    keyring: webhookKeys,
    logger: ctx.logger,
  });
  if (resealed.resealed > 0 || resealed.unreadable > 0)
    ctx.logger.info("webhook signing secrets re-encrypted", { ...resealed, keyId: webhookKeys.primaryKeyId });
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
  const ledgerReads = new PgLedgerReads(ctx.deps.pool);
  const chain = createRunnerChainBoundary({
    config: ctx.config,
    secrets: ctx.secrets,
    pool: ctx.deps.pool,
    entities: entityClient,
    executions: executions.client,
    indexedHeights: (chainId) => ledgerReads.indexedHeight(chainId),
    logger: ctx.logger,
  });
  // One set, the host's services and the application's: the engine refuses to start when a
  // registered workflow or activity declares one it lacks.
  const services = new ServiceSet([
    ...chain.services,
    ...(app.services?.({
      config: ctx.config,
      pool: ctx.deps.pool,
      redis: ctx.deps.redis,
      logger: ctx.logger,
      executions: executions.client,
    }) ?? []),
  ]);
  const engine = await startRunnerEngine({
    config: ctx.config,
    registry,
    services,
    logger: ctx.logger,
    pool: ctx.deps.pool,
    workerRedis: ctx.deps.workerRedis,
    producerRedis: ctx.deps.redis,
    entities,
    activities,
    // The application's schedules and the chain boundary's (nonce recovery) run with the runner's own.
    schedules: (deps) => [...app.schedules(deps), ...chain.schedules],
    metrics: ctx.metrics,
  });
  // Webhook delivery (docs/webhooks.md): every runner claims due deliveries from PostgreSQL.
  const webhooks = startWebhookDispatcher({
    store: new PgWebhookDispatch(ctx.deps.pool),
    settings: ctx.config.webhooks,
    keyring: webhookKeys,
    logger: ctx.logger,
    metrics: ctx.metrics,
  });
  // A failure past this point must not leave workers running: startup may relaunch in process.
  const withWorkers = {
    async stop() {
      await webhooks.stop();
      await chain.stop();
      await engine.stop();
      await executions.close();
      await entityClient.close();
    },
  };
  // Liveness: when this process dies, a survivor moves its jobs at once (docs/engine.md).
  const liveness = await stopOnFailure(withWorkers, () =>
    startRunnerLiveness({
      config: ctx.config,
      redis: ctx.deps.redis,
      workers: engine.workers,
      logger: ctx.logger,
      onTakeover: engine.reportTakeover,
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
      report: engine.report,
    }),
  );
  return {
    async stop() {
      await shards.stop();
      await started.stop();
    },
  };
}
