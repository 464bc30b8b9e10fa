import { startHealthServer } from "../observability/health-server.js";
import type { RoleContext, RoleHandle } from "./role-handle.js";
import { startRoleShardOwner } from "./role-shard-owner.js";
import { stopOnFailure } from "./stop-on-failure.js";

/**
 * The indexer role. It owns the Ledger Index (docs/architecture.md, "Roles"); until per-chain
 * ingest lands it holds its connections, owns its share of the indexer shards (where ingest loops
 * will run) and reports health, so deployments and the supervisor treat it like the others.
 */
export async function startIndexerRole(ctx: RoleContext): Promise<RoleHandle> {
  const shards = await startRoleShardOwner({
    config: ctx.config,
    deps: ctx.deps,
    domain: "indexer",
    logger: ctx.logger,
    onChange: (owned) => ctx.metrics.shardsOwned.set({ domain: "indexer" }, owned.length),
  });
  const { server } = await stopOnFailure(shards, () =>
    startHealthServer({
      port: ctx.config.indexer.healthPort,
      checks: ctx.readiness,
      state: ctx.health,
      metrics: ctx.metrics.registry,
    }),
  );
  ctx.logger.info("indexer started", { healthPort: ctx.config.indexer.healthPort, chains: [] });
  return {
    async stop() {
      await shards.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
