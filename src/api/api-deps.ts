import type { KeyObject } from "node:crypto";
import type { Redis } from "ioredis";
import type { ChainProbe } from "../chain/chain-probe.js";
import type { ExecutionClient, ExecutionTransport } from "../engine/execution-client.js";
import type { WorkflowRegistry } from "../engine/registry.js";
import type { KeyLineReader } from "../keyed/key-line.js";
import type { LedgerDomainReads, LedgerReads } from "../ledger-index/ledger-reads.js";
import type { LedgerScopeTracking } from "../ledger-index/ledger-scope.js";
import type { HealthServerOptions, HealthState } from "../observability/health-server.js";
import type { Logger } from "../observability/logger.js";
import type { TenorMetrics } from "../observability/metrics.js";
import type { ReplicaDirectory } from "../ownership/replica-directory.js";
import type { ScheduleControl } from "../schedules/schedule-control.js";
import type { PgApiKeys } from "../store/pg-api-keys.js";
import type { PgApprovals } from "../store/pg-approvals.js";
import type { PgAudit } from "../store/pg-audit.js";
import type { PgEvidence } from "../store/pg-evidence.js";
import type { PgExecutionCommands } from "../store/pg-execution-commands.js";
import type { PgExecutionReads } from "../store/pg-execution-reads.js";
import type { PgOperations } from "../store/pg-operations.js";
import type { PgPlatformStatus } from "../store/pg-platform-status.js";
import type { PgRunActivity } from "../store/pg-run-activity.js";
import type { PgWaitProbe } from "../store/pg-wait-probe.js";
import type { WebhookSecretKeyring } from "../webhooks/secret-keyring.js";
import type { WebhookStore } from "../webhooks/webhook-store.js";
import type { AdmissionSettings } from "./admission.js";

/** The `api.*` settings the routes use (src/config/schema.ts documents units and defaults). */
export interface ApiSettings {
  maxPreferWaitSeconds: number;
  /** Fallback re-read interval of a `Prefer: wait`, in ms, should the finished notification be lost. */
  waitFallbackPollMs: number;
  bodyLimitBytes: number;
  idempotencyTtlSeconds: number;
  noMutationThresholdSeconds: number;
  rateLimit: { max: number; windowSeconds: number };
  /** Admission control (src/api/admission.ts); none when unset. */
  admission?: AdmissionSettings;
}

/** Everything the API modules need; built once by the api role (or a test). */
export interface ApiDeps {
  settings: ApiSettings;
  registry: WorkflowRegistry;
  client: ExecutionClient;
  /** Wakes an execution after a cancel or an approval decision. */
  transport: ExecutionTransport;
  /** Board sessions, rate-limit counters and queue discovery (Bull Board shows every Tenor queue). */
  redis: Redis;
  /** The Redis key prefix of this deployment. */
  prefix: string;
  reads: PgExecutionReads;
  /** Resume and cancellation marks on an organisation's executions. */
  commands: PgExecutionCommands;
  /** Bulk operations by query, and the most runs one may act on (`durable.operations.maxItems`). */
  operations: { store: PgOperations; maxItems: number };
  /** Workflow health from the status projections (the status route and the console). */
  platformStatus: PgPlatformStatus;
  /**
   * Every registered schedule's state, cadence and next run (the platform status and the schedules
   * routes), and an operator's pause, resume and trigger.
   */
  schedules: ScheduleControl;
  /** Live runners and indexers and the shards no one owns, for the platform status and the console. */
  replicas: ReplicaDirectory;
  /** Shards per ownership domain (`durable.sharding.shardCount`): the coverage the status reports. */
  shardCount: number;
  /** An execution's input, signals and audit rows, for its evidence export. */
  evidence: PgEvidence;
  /** An execution's delivered signals, audit rows and payload sizes, for its activity resource. */
  runActivity: PgRunActivity;
  approvals: PgApprovals;
  keys: PgApiKeys;
  audit: PgAudit;
  /** Where a run stands in the lines of the keys it waits for, and who holds them (docs/keyed.md). */
  keyLines: KeyLineReader;
  /** Whether a waiting execution's wait is satisfied now: a replayed request wakes again only then. */
  waitProbe: PgWaitProbe;
  /** The Ledger Index's heights (the indexed wait of a chain write), balances and per-chain health. */
  ledgerReads: LedgerReads;
  /** Which contracts each organisation tracks (the index's reads answer only for those), and additions to it. */
  ledgerScope: LedgerScopeTracking;
  /** The Ledger Index's price-feed, asset-status and system-settings reads. */
  ledgerDomainReads: LedgerDomainReads;
  logger: Logger;
  /** Readiness checks of /readyz. */
  readiness: HealthServerOptions["checks"];
  health: HealthState;
  /** Request and start counters, served at /metrics; absent in tests that do not scrape. */
  metrics?: TenorMetrics;
  /** Event-loop lag now, in milliseconds; admission control reads it. */
  eventLoopLagMs?: () => number;
  /** Expected wait for a connection of the api's pool now, in milliseconds; admission control reads it. */
  poolWaitMs?: () => number;
  /** Ids of the configured chains (`chains[].id`); a write to any other chain is refused at once. */
  chainIds: readonly number[];
  /**
   * The configured custody signers (`signers[]` of kind `custody`: id, and organisation unless the
   * platform's): a contract deployment through one is refused at the request, since the provider's
   * intents always name a callee.
   */
  custodySigners: readonly CustodySignerRef[];
  /** The configured chains' heads and code, read from their nodes (a tracked contract's start height is checked). */
  chainProbe: ChainProbe;
  /**
   * Webhook settings the routes need, and the keyring that encrypts new signing secrets
   * (`webhooks.secretKeys`). Absent: internal addresses are refused and so is a new subscription.
   */
  webhooks?: { allowPrivateAddresses: boolean; keyring: WebhookSecretKeyring };
  /** Webhook subscriptions, deliveries and dead letters of every organisation. */
  webhookStore: WebhookStore;
  /** Ed25519 private key that signs evidence exports (`evidence.signingKey`); none: exports are refused. */
  evidenceKey?: KeyObject;
}

/** A custody signer as the API knows it: no secret, no provider address. */
export interface CustodySignerRef {
  id: string;
  /** Unset: the platform's signer, usable by every organisation. */
  orgId?: string | undefined;
}
