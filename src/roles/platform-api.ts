import type { KeyObject } from "node:crypto";
import type { Express } from "express";
import type { Redis } from "ioredis";
import type { Pool } from "pg";
import type { AdmissionReason, AdmissionSettings } from "../api/admission.js";
import type { ApiDeps, ApiSettings, CustodySignerRef } from "../api/api-deps.js";
import type { ApiRoutes } from "../api/application-routes.js";
import { EXECUTION_SENT_ENTITIES } from "../api/executions/key-queue.js";
import { trackPoolWait } from "../api/pool-wait-estimate.js";
import { createApiApp } from "../api/server.js";
import { chainProbe } from "../chain/chain-probe.js";
import { ChainClients } from "../chain/rpc-clients.js";
import { configSchema, type TenorConfig } from "../config/schema.js";
import type { WorkflowRegistry } from "../engine/registry.js";
import { PgKeyLines } from "../keyed/store/pg-key-lines.js";
import { PgLedgerDomainReads } from "../ledger-index/store/domain-reads.js";
import { PgLedgerReads } from "../ledger-index/store/reads.js";
import { PgLedgerScope } from "../ledger-index/store/scope.js";
import { EventLoopLagMonitor } from "../observability/event-loop-lag.js";
import type { HealthState, ReadinessCheck } from "../observability/health-server.js";
import type { Logger } from "../observability/logger.js";
import type { TenorMetrics } from "../observability/metrics.js";
import { registerLiveReplicasGauge } from "../ownership/replica-gauge.js";
import { PgReplicaDirectory } from "../ownership/store/pg-replica-directory.js";
import { scheduleControl } from "../schedules/schedule-control.js";
import { PgApiKeys } from "../store/pg-api-keys.js";
import { PgApprovals } from "../store/pg-approvals.js";
import { PgAudit } from "../store/pg-audit.js";
import { PgEvidence } from "../store/pg-evidence.js";
import { PgExecutionCommands } from "../store/pg-execution-commands.js";
import { PgExecutionReads } from "../store/pg-execution-reads.js";
import { PgOperations } from "../store/pg-operations.js";
import { PgPlatformStatus } from "../store/pg-platform-status.js";
import { hasFreeConnection } from "../store/pg-pool.js";
import { PgRunActivity } from "../store/pg-run-activity.js";
import { PgWaitProbe } from "../store/pg-wait-probe.js";
import { PgWebhooks } from "../webhooks/store/pg-webhooks.js";
import { createExecutionClient } from "./create-execution-client.js";

/** `durable` as the configuration defaults it, for an api built without a configuration. */
const DEFAULT_DURABLE = configSchema.shape.durable.parse(undefined);
const DEFAULT_SHARDING = DEFAULT_DURABLE.sharding;

export interface PlatformApiOptions {
  settings: ApiSettings;
  pool: Pool;
  /** Producer connection for the executions queue. */
  redis: Redis;
  prefix: string;
  registry: WorkflowRegistry;
  /** The application's routes (`Application.routes`); default none. */
  routes?: readonly ApiRoutes[];
  /** The process's configuration, handed to the application's routes (the api role passes it); default none. */
  config?: TenorConfig;
  logger: Logger;
  readiness: Readonly<Record<string, ReadinessCheck>>;
  health: HealthState;
  metrics?: TenorMetrics;
  /**
   * Admission control; off when unset (the api role passes `api.admission`; in-process test apps
   * opt in, so a slow test machine never turns their requests into 503s).
   */
  admission?: AdmissionSettings;
  /** Event-loop lag probe for admission control; default: an EventLoopLagMonitor of this process. */
  eventLoopLagMs?: () => number;
  /**
   * `durable.sharding.livenessWindowMs` and `shardCount` (the api role passes the configuration's;
   * default the configuration's defaults): who counts as a live replica, and of how many shards.
   */
  sharding?: { livenessWindowMs: number; shardCount: number };
  /** Ids of the configured chains (the api role passes `chains[].id`); default none. */
  chainIds?: readonly number[];
  /** The configured custody signers (the api role passes `signers[]` of kind `custody`); default none. */
  custodySigners?: readonly CustodySignerRef[];
  /** The configured chains' read clients (the api role builds them from `chains`); default none. */
  chains?: ChainClients;
  /** Signs evidence exports (src/api/evidence/signing-key.ts); none: exports answer 503. */
  evidenceKey?: KeyObject;
  /**
   * `webhooks.allowPrivateAddresses` and the `webhooks.secretKeys` keyring (the api role passes the
   * configuration's); absent: internal addresses are refused and so is a new subscription.
   */
  webhooks?: ApiDeps["webhooks"];
  /** `durable.operations.maxItems` (the api role passes the configuration's); default its default. */
  operationsMaxItems?: number;
}

/**
 * The Platform API wired to PostgreSQL and the executions queue: what the api role serves and
 * what the API tests run in-process. `overload` is why admission refuses every request now (the
 * health port's /readyz reports it too); `ready` is called once the process turns ready, and
 * forgets the event-loop lag its startup caused. `close` releases the queue; the caller owns pool
 * and Redis.
 */
export function createPlatformApi(options: PlatformApiOptions): {
  app: Express;
  keys: PgApiKeys;
  overload(): AdmissionReason | null;
  ready(): void;
  close(): Promise<void>;
} {
  const { pool } = options;
  const execution = createExecutionClient({
    pool,
    redis: options.redis,
    prefix: options.prefix,
    registry: options.registry,
    logger: options.logger,
    waitFallbackPollMs: options.settings.waitFallbackPollMs,
  });
  const keys = new PgApiKeys(pool);
  const sharding = options.sharding ?? DEFAULT_SHARDING;
  const replicas = new PgReplicaDirectory(pool, sharding.livenessWindowMs);
  // On the api too: the live-runner count must still read 0 when no runner is left to report it.
  if (options.metrics) registerLiveReplicasGauge(options.metrics, replicas, () => hasFreeConnection(pool));
  const monitor = options.admission && !options.eventLoopLagMs ? new EventLoopLagMonitor() : undefined;
  const eventLoopLagMs = options.eventLoopLagMs ?? (monitor ? () => monitor.lagMs() : undefined);
  // Only with admission on: it is the estimate's one reader, and the listeners run on every checkout.
  const poolWait = options.admission ? trackPoolWait(pool) : undefined;
  const schedules = scheduleControl({ pool, redis: options.redis, prefix: options.prefix });
  const reads = new PgExecutionReads(pool);
  const host = {
    executions: { client: execution.client, reads, settings: options.settings },
    ...(options.config ? { config: options.config } : {}),
  };
  const api = createApiApp({
    settings: { ...options.settings, admission: options.admission },
    registry: options.registry,
    client: execution.client,
    transport: execution.queue,
    redis: options.redis,
    prefix: options.prefix,
    reads,
    commands: new PgExecutionCommands(pool),
    operations: {
      store: new PgOperations(pool),
      maxItems: options.operationsMaxItems ?? DEFAULT_DURABLE.operations.maxItems,
    },
    platformStatus: new PgPlatformStatus(pool),
    schedules,
    replicas,
    shardCount: sharding.shardCount,
    evidence: new PgEvidence(pool),
    runActivity: new PgRunActivity(pool),
    approvals: new PgApprovals(pool),
    keys,
    audit: new PgAudit(pool),
    waitProbe: new PgWaitProbe(pool),
    keyLines: new PgKeyLines(pool, EXECUTION_SENT_ENTITIES),
    webhookStore: new PgWebhooks(pool),
    ledgerReads: new PgLedgerReads(pool),
    ledgerScope: new PgLedgerScope(pool),
    ledgerDomainReads: new PgLedgerDomainReads(pool),
    logger: options.logger,
    readiness: options.readiness,
    health: options.health,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(eventLoopLagMs ? { eventLoopLagMs } : {}),
    ...(poolWait ? { poolWaitMs: poolWait.expectedWaitMs } : {}),
    chainIds: options.chainIds ?? [],
    custodySigners: options.custodySigners ?? [],
    chainProbe: chainProbe(options.chains ?? new ChainClients({ chains: [], durable: DEFAULT_DURABLE })),
    ...(options.evidenceKey ? { evidenceKey: options.evidenceKey } : {}),
    ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    applicationRoutes: (options.routes ?? []).map((routes) => routes.overStores(pool, host)),
  });
  return {
    app: api.app,
    keys,
    overload: api.overload,
    ready: () => monitor?.restart(),
    close: async () => {
      monitor?.stop();
      poolWait?.stop();
      await api.close();
      await execution.close();
      await schedules.close();
    },
  };
}
