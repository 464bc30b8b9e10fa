import { createServer } from "node:http";
import { loadEvidenceSigningKey } from "../api/evidence/signing-key.js";
import { applyHttpTimeouts } from "../api/http-timeouts.js";
import { ChainClients } from "../chain/rpc-clients.js";
import { WorkflowRegistry } from "../engine/registry.js";
import { listenOn, startHealthServer } from "../observability/health-server.js";
import { loadWebhookSecretKeyring } from "../webhooks/secret-keyring.js";
import type { Application } from "./application.js";
import { createPlatformApi } from "./platform-api.js";
import type { RoleContext, RoleHandle } from "./role-handle.js";

/**
 * The api role: the Platform API (src/api) and the application's routes, with /livez and /readyz
 * on the same port. It starts
 * executions and delivers signals but never runs workflow code (docs/architecture.md, "Roles").
 */
export async function startApiRole(
  ctx: RoleContext,
  application: Pick<Application, "workflows" | "routes">,
): Promise<RoleHandle> {
  // Registration first: the API validates inputs with the workflows' own schemas.
  const registry = new WorkflowRegistry(application.workflows);
  const evidenceKey = loadEvidenceSigningKey(ctx.config, ctx.secrets);
  const webhookKeys = loadWebhookSecretKeyring(ctx.config.webhooks, ctx.secrets);
  if (webhookKeys.primaryKeyId === null)
    ctx.logger.warn(
      webhookKeys.plaintextAllowed
        ? "webhook signing secrets are stored in plain text (webhooks.plaintextSecrets): development only"
        : "no webhooks.secretKeys configured: creating webhook subscriptions is refused",
    );
  const api = createPlatformApi({
    settings: ctx.config.api,
    pool: ctx.deps.pool,
    redis: ctx.deps.redis,
    prefix: ctx.config.redisPrefix,
    registry,
    routes: application.routes ?? [],
    config: ctx.config,
    logger: ctx.logger,
    readiness: ctx.readiness,
    health: ctx.health,
    metrics: ctx.metrics,
    admission: ctx.config.api.admission,
    chainIds: ctx.config.chains.map((chain) => chain.id),
    custodySigners: ctx.config.signers.flatMap((s) =>
      s.kind === "custody" ? [{ id: s.id, orgId: s.orgId }] : [],
    ),
    chains: new ChainClients(ctx.config),
    sharding: ctx.config.durable.sharding,
    operationsMaxItems: ctx.config.durable.operations.maxItems,
    ...(evidenceKey ? { evidenceKey } : {}),
    webhooks: { allowPrivateAddresses: ctx.config.webhooks.allowPrivateAddresses, keyring: webhookKeys },
  });
  const app = api.app;
  // The health port (with /metrics) first, then the public port; a port in use fails at once.
  const health = await startHealthServer({
    port: ctx.config.api.healthPort,
    portSetting: "TENOR_API_HEALTH_PORT",
    checks: ctx.readiness,
    state: ctx.health,
    metrics: ctx.metrics.registry,
    overload: api.overload,
  }).catch(async (error: unknown) => {
    await api.close();
    throw error;
  });
  const closeHealth = () => new Promise<void>((resolve) => health.server.close(() => resolve()));
  // A port in use fails at once (PORT_UNAVAILABLE, not retried); nothing has started work yet.
  const server = createServer(app);
  await listenOn(server, ctx.config.api.port, "0.0.0.0", "TENOR_API_PORT").catch(async (error: unknown) => {
    // Startup may relaunch in process: release the queue before the next attempt.
    await closeHealth();
    await api.close();
    throw error;
  });
  applyHttpTimeouts(server, ctx.config.api.http);
  ctx.logger.info("api started", {
    port: ctx.config.api.port,
    healthPort: health.port,
    workflows: registry.names(),
  });
  return {
    ready: api.ready,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Long `Prefer: wait` requests and keep-alive sockets must not outlive the grace period.
        server.closeIdleConnections();
      });
      await api.close();
      await closeHealth();
    },
  };
}
