import type { Pool } from "pg";
import type { TenorConfig } from "../config/schema.js";
import type { SecretReadOptions } from "../config/secret.js";
import type { ExecutionClient } from "../engine/execution-client.js";
import { provide, type ServiceProvision } from "../engine/services.js";
import type { EntityClient } from "../keyed/entity-client.js";
import type { Logger } from "../observability/logger.js";
import { shardOf } from "../ownership/shard-map.js";
import type { ShardWork } from "../ownership/shard-owner.js";
import type { ScheduleDefinition } from "../schedules/schedule-definition.js";
import {
  chainAccessService,
  entityNonceReservationReader,
  entityNonceReserver,
  entityParkedNonceReserver,
  entityWindowedNonceReserver,
} from "./lifecycle/chain-access.js";
import { type IndexedHeightReader, indexedHeightsService } from "./lifecycle/wait-for-indexed.js";
import { nonceRecoverySchedule } from "./nonce-recovery.js";
import { openNonceWindow } from "./nonce-window.js";
import { ChainClients } from "./rpc-clients.js";
import { SignerRegistry } from "./signers/signer-registry.js";
import { executionOrg } from "./store/chain-watch-sql.js";
import { startConfirmationWatcher } from "./watcher/confirmation-watcher.js";

/**
 * The runner's chain boundary: clients per configured chain, the signers (secrets read here), the
 * lifecycle's services (`services`: the chain access and the index's heights), and the confirmation watcher on the shards this replica owns
 * (`shardWork` goes to the runner's shard owner), and the nonce-recovery schedule (`schedules`).
 */
export function createRunnerChainBoundary(options: {
  config: TenorConfig;
  secrets: SecretReadOptions;
  pool: Pool;
  entities: EntityClient;
  executions: Pick<ExecutionClient, "signalMany">;
  /** The Ledger Index's indexed heights, which `waitForIndexed` polls (the host hands in the index's read). */
  indexedHeights: IndexedHeightReader;
  logger: Logger;
}): {
  shardWork: ShardWork;
  schedules: ScheduleDefinition[];
  services: ServiceProvision[];
  stop(): Promise<void>;
} {
  const chains = new ChainClients(options.config);
  const signers = SignerRegistry.fromConfig(options.config, options.secrets);
  const services = [
    provide(chainAccessService, {
      chains,
      signers,
      reserveNonce: entityNonceReserver(options.entities),
      reserveNonceWithin: entityWindowedNonceReserver(options.entities),
      postNonceReservation: entityParkedNonceReserver(options.entities, options.executions),
      nonceReservationReply: entityNonceReservationReader(options.entities),
      openNonceWindow: (window: { chainId: number; sender: string; slots: number }) =>
        openNonceWindow({ pool: options.pool, executions: options.executions }, window),
      executionOrg: (id) => executionOrg(options.pool, id),
    }),
    provide(indexedHeightsService, options.indexedHeights),
  ];
  const owned = new Set<number>();
  const shardCount = options.config.durable.sharding.shardCount;
  const watcher = startConfirmationWatcher({
    pool: options.pool,
    executions: options.executions,
    chains,
    owns: (executionId) => owned.has(shardOf(executionId, shardCount)),
    logger: options.logger.child({ component: "runner" }),
  });
  return {
    services,
    schedules: [
      nonceRecoverySchedule(
        { pool: options.pool, chains, signers },
        options.config.durable.nonceRecovery.intervalMs,
      ),
    ],
    shardWork: {
      start(lease) {
        owned.add(lease.shard);
      },
      stop(shard) {
        owned.delete(shard);
      },
    },
    async stop() {
      await watcher.stop();
    },
  };
}
