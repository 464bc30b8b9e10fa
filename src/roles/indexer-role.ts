import { hostname } from "node:os";
import { ChainClients } from "../chain/rpc-clients.js";
import { LedgerIndexer } from "../ledger-index/ledger-indexer.js";
import { registerLedgerMetrics } from "../ledger-index/ledger-metrics.js";
import { PgLedgerReads } from "../ledger-index/store/reads.js";
import { startHealthServer } from "../observability/health-server.js";
import { registerLiveReplicasGauge } from "../ownership/replica-gauge.js";
import { PgReplicaDirectory } from "../ownership/store/pg-replica-directory.js";
import { hasFreeConnection } from "../store/pg-pool.js";
import { ledgerIndexStores } from "./ledger-index-stores.js";
import type { RoleContext, RoleHandle } from "./role-handle.js";
import { startRoleShardOwner } from "./role-shard-owner.js";
import { stopOnFailure } from "./stop-on-failure.js";

/**
 * The indexer role: the Ledger Index (docs/ledger-index.md). Each configured chain's live tail runs
 * on the replica owning that chain's indexer shard; every replica shares the historical catch-up
 * ranges; the index's health is served as metrics on the health port.
 */
export async function startIndexerRole(ctx: RoleContext): Promise<RoleHandle> {
  // The health port before any work: a port in use ends the start at once (PORT_UNAVAILABLE).
  const { server } = await startHealthServer({
    port: ctx.config.indexer.healthPort,
    portSetting: "TENOR_INDEXER_HEALTH_PORT",
    checks: ctx.readiness,
    state: ctx.health,
    metrics: ctx.metrics.registry,
  });
  const closeHealth = () => new Promise<void>((resolve) => server.close(() => resolve()));
  const work = await stopOnFailure({ stop: closeHealth }, () => startIndexerWork(ctx));
  return {
    async stop() {
      await work.stop();
      await closeHealth();
    },
  };
}

/** The Ledger Index's shards and catch-up, started once the health port is bound. */
async function startIndexerWork(ctx: RoleContext): Promise<RoleHandle> {
  const chains = new ChainClients(ctx.config);
  const onReorg = registerLedgerMetrics(ctx.metrics, () => new PgLedgerReads(ctx.deps.pool).health());
  registerLiveReplicasGauge(
    ctx.metrics,
    new PgReplicaDirectory(ctx.deps.pool, ctx.config.durable.sharding.livenessWindowMs),
    () => hasFreeConnection(ctx.deps.pool),
  );
  const indexer = new LedgerIndexer({
    stores: ledgerIndexStores(ctx.deps.pool),
    chains,
    shardCount: ctx.config.durable.sharding.shardCount,
    settings: ctx.config.indexer,
    replicaId: `${hostname()}:${process.pid}`,
    logger: ctx.logger,
    onReorg,
  });
  const shards = await startRoleShardOwner({
    config: ctx.config,
    deps: ctx.deps,
    domain: "indexer",
    logger: ctx.logger,
    work: indexer.work,
    onChange: (owned) => ctx.metrics.shardsOwned.set({ domain: "indexer" }, owned.length),
  });
  const catchUp = indexer.startCatchUp();
  ctx.logger.info("indexer started", {
    healthPort: ctx.config.indexer.healthPort,
    chains: chains.all().map((c) => c.config.id),
  });
  return {
    async stop() {
      await Promise.all([shards.stop(), catchUp.stop()]);
    },
  };
}
