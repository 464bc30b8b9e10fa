import type { TenorConfig } from "../config/schema.js";
import { reservedSessionUrl } from "../config/session-url.js";
import type { Logger } from "../observability/logger.js";
import type { ReplicaReport } from "../ownership/replica-directory.js";
import type { ShardDomain } from "../ownership/shard-map.js";
import { ShardOwner, type ShardWork } from "../ownership/shard-owner.js";
import type { Dependencies } from "./dependencies.js";

/**
 * Starts the shard ownership of a runner or indexer replica from configuration. Until work is
 * mapped to shards (chain ingest, confirmation watchers) the default work only logs at debug.
 */
export async function startRoleShardOwner(options: {
  config: TenorConfig;
  deps: Pick<Dependencies, "pool">;
  domain: ShardDomain;
  logger: Logger;
  work?: ShardWork;
  /** Called when the owned set changes (metrics). */
  onChange?: (owned: readonly number[]) => void;
  /** What each heartbeat reports (a runner's workflows and turns in progress). */
  report?: () => ReplicaReport;
}): Promise<ShardOwner> {
  const { sharding } = options.config.durable;
  const owner = new ShardOwner({
    connectionString: reservedSessionUrl(options.config),
    pool: options.deps.pool,
    domain: options.domain,
    shardCount: sharding.shardCount,
    refreshIntervalMs: sharding.refreshIntervalMs,
    livenessWindowMs: sharding.livenessWindowMs,
    logger: options.logger,
    ...(options.work ? { work: options.work } : {}),
    ...(options.onChange ? { onChange: options.onChange } : {}),
    ...(options.report ? { report: options.report } : {}),
  });
  await owner.start();
  return owner;
}
