import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import type { Pool } from "pg";
import { loadConfig } from "../config/load-config.js";
import { ActivityRegistry, type AnyActivity } from "../engine/activity.js";
import type { Duration } from "../engine/duration.js";
import type { ExecutionClient } from "../engine/execution-client.js";
import { WorkflowRegistry } from "../engine/registry.js";
import { type ServiceProvision, ServiceSet } from "../engine/services.js";
import type { AnyWorkflow, WorkflowDefinition } from "../engine/workflow.js";
import type { AnyEntity } from "../keyed/entity.js";
import { EntityClient } from "../keyed/entity-client.js";
import { EntityRegistry } from "../keyed/entity-registry.js";
import { createLogger } from "../observability/logger.js";
import type { ApplicationRuntimeDependencies } from "../roles/application.js";
import { createExecutionClient } from "../roles/create-execution-client.js";
import { type RunnerEngine, startRunnerEngine } from "../roles/runner-engine.js";
import { createTestKitStores, type TestKitStores } from "../roles/test-kit-stores.js";
import { executionsDueBy } from "../store/pg-due-waits.js";
import { createPgPool } from "../store/pg-pool.js";
import { createRedisConnection } from "../transport/redis-connection.js";
import { TestClock } from "./test-clock.js";
import { TestPeople } from "./test-people.js";
import { TestRun } from "./test-run.js";

export interface TestKitOptions {
  /** A migrated database of the test's own (each test file its own: runs are not isolated otherwise). */
  databaseUrl: string;
  /** Create the database when missing and apply Tenor's migrations first (default false: already migrated). */
  migrate?: boolean;
  redisUrl: string;
  /** BullMQ prefix; default `tenor-test:<random>`, deleted again by `stop()`. */
  redisPrefix?: string;
  /** Every workflow the test runs, children included (the runner refuses unregistered ones). */
  workflows: readonly AnyWorkflow[];
  /** Activities the workflows call, worked on in the test process on their own queues. */
  activities?: readonly AnyActivity[];
  /** Keyed entities the workflows use. */
  entities?: readonly AnyEntity[];
  /**
   * The services the workflows and activities declare (`provide(key, value)`, often a fake), built
   * over the kit's connections like an application's (`Application.services`); with chains, the
   * chain boundary's own join them. The runner refuses to start without a declared one.
   */
  services?: (deps: ApplicationRuntimeDependencies) => readonly ServiceProvision[];
  /** Organisation the runs belong to unless a start names another (default `test`). */
  orgId?: string;
  /** Where the workflow clock starts (default: now). */
  startAt?: Date;
  /** Log level of the engine (default `warn`). */
  logLevel?: "error" | "warn" | "info" | "debug";
  /**
   * More of the configuration document (docs: README, "Configuration"), e.g. `chains` and `signers`
   * for workflows that reach a chain; its `durable` settings are merged over the kit's short ones.
   * With chains, the kit provides the chain boundary (clients, signers, nonces) as a runner does.
   */
  config?: Record<string, unknown>;
  /** Environment the configuration's secrets are read from (`{ env: "NAME" }` sources); default none. */
  env?: Record<string, string>;
}

/** Lock, sweep and recovery settings for a test: short enough that nothing waits on a default. */
const TEST_DURABLE = {
  lock: { lockDurationMs: 2_000, stalledIntervalMs: 1_000 },
  recovery: { maxAttempts: 10, maxDurationMs: 600_000, baseDelayMs: 50, maxDelayMs: 500 },
  sweep: { intervalMs: 500, graceMs: 2_000 },
};

/** How often the kit wakes executions whose wake-up time virtual time has passed, in ms. */
const DUE_POLL_MS = 100;

/**
 * A runner and a client in the test process, on real PostgreSQL and Redis, with a workflow clock
 * the test moves forward (docs/writing-workflows.md, "Testing"). Start one per test file.
 */
export class TestKit {
  private duePoll: NodeJS.Timeout | undefined;
  private stopped = false;

  private constructor(
    readonly clock: TestClock,
    readonly client: ExecutionClient,
    /** The engine's pool, for assertions on the test's own tables. */
    readonly pool: Pool,
    readonly orgId: string,
    private readonly registry: WorkflowRegistry,
    private readonly engine: RunnerEngine,
    private readonly people: TestPeople,
    private readonly stores: TestKitStores,
    private readonly release: () => Promise<void>,
  ) {}

  /** Connects, starts the runner (registering `workflows`) and returns the kit; `stop()` it after the tests. */
  static async start(options: TestKitOptions): Promise<TestKit> {
    if (options.migrate) {
      const { applyMigrations, ensureDatabase } = await import("../store/migrations/index.js");
      await ensureDatabase(options.databaseUrl);
      await applyMigrations(options.databaseUrl);
    }
    const prefix = options.redisPrefix ?? `tenor-test:${randomBytes(4).toString("hex")}`;
    const extra = options.config ?? {};
    const durable = { ...TEST_DURABLE, ...((extra.durable as object | undefined) ?? {}) };
    const config = loadConfig({
      env: {
        ...options.env,
        DATABASE_URL: options.databaseUrl,
        REDIS_URL: options.redisUrl,
        TENOR_REDIS_PREFIX: prefix,
        TENOR_CONFIG: "test-kit.yaml",
      },
      // JSON is YAML: the configuration file the loader reads is this document.
      readFile: () => JSON.stringify({ ...extra, durable }),
    });
    const logger = createLogger({ level: options.logLevel ?? "warn" });
    const pool = createPgPool(config.databaseUrl, { applicationName: "tenor-test-kit", max: 10 });
    const producer: Redis = createRedisConnection(config.redisUrl, "producer");
    const worker: Redis = createRedisConnection(config.redisUrl, "worker");
    const registry = new WorkflowRegistry(options.workflows);
    const clock = new TestClock(options.startAt);
    const client = createExecutionClient({ pool, redis: producer, prefix, registry, logger });
    // The chain boundary is loaded only when configured: loading it declares the chain's own
    // workflow and entity, which a runner without them would refuse as unregistered.
    const boundary = config.chains.length > 0 ? await loadChainBoundary() : undefined;
    const entities = new EntityRegistry([
      ...(options.entities ?? []),
      ...(boundary && !options.entities?.includes(boundary.nonceEntity) ? [boundary.nonceEntity] : []),
    ]);
    const stores = createTestKitStores(pool);
    // Built before the workers start, as the runner role does: its services join the test's own.
    const chain = boundary?.createRunnerChainBoundary({
      config,
      secrets: { env: { ...options.env } },
      pool,
      entities: new EntityClient({ pool, redis: producer, prefix, registry: entities, logger }),
      executions: client.client,
      indexedHeights: (chainId) => stores.ledger.indexedHeight(chainId),
      logger,
    });
    const engine = await startRunnerEngine({
      config,
      registry,
      services: new ServiceSet([
        ...(chain?.services ?? []),
        ...(options.services?.({ config, pool, redis: producer, logger, executions: client.client }) ?? []),
      ]),
      logger,
      pool,
      workerRedis: worker,
      producerRedis: producer,
      activities: new ActivityRegistry(options.activities ?? []),
      entities,
      clock: clock.now,
    });
    const release = async () => {
      await engine.stop().catch(() => undefined);
      await chain?.stop().catch(() => undefined);
      await client.close().catch(() => undefined);
      await deletePrefix(producer, prefix).catch(() => undefined);
      await Promise.allSettled([producer.quit(), worker.quit(), pool.end()]);
    };
    const people = new TestPeople(stores.keys);
    const kit = new TestKit(
      clock,
      client.client,
      pool,
      options.orgId ?? "test",
      registry,
      engine,
      people,
      stores,
      release,
    );
    kit.duePoll = setInterval(() => void kit.wakeDue().catch(() => undefined), DUE_POLL_MS);
    kit.duePoll.unref();
    return kit;
  }

  /**
   * Starts `workflow` with `input` (as the API takes it: typed values in their encoded form) and
   * returns a handle to drive and inspect the run.
   *
   * @param options.as - the subject who starts it (default `test-starter`); that subject may not approve it.
   */
  async start<I, O>(
    workflow: WorkflowDefinition<I, O>,
    input: unknown,
    options: { as?: string; orgId?: string; idempotencyKey?: string } = {},
  ): Promise<TestRun<O>> {
    const orgId = options.orgId ?? this.orgId;
    const starter = await this.people.key(orgId, options.as ?? "test-starter", "integrator");
    const { executionId } = await this.client.start({
      workflow: workflow.name,
      input,
      orgId,
      createdBy: starter.keyId,
      ...(options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {}),
    });
    return this.run(executionId, orgId, workflow);
  }

  /** A handle on an execution that already exists (a child, a run started elsewhere). */
  run<O = unknown>(executionId: string, orgId = this.orgId, workflow?: AnyWorkflow): TestRun<O> {
    return new TestRun<O>(executionId, orgId, {
      client: this.client,
      pool: this.pool,
      reads: this.stores.reads,
      approvals: this.stores.approvals,
      people: this.people,
      wake: (id, name) => this.engine.queue.wake(id, name),
      ...(workflow ? { workflow } : {}),
    });
  }

  /**
   * Moves the workflow clock forward by `duration` and wakes every waiting execution whose timer
   * or deadline is now due, so a 30-day sleep or a 2-day approval deadline fires at once; the
   * journal records the virtual times. Returns the new virtual now.
   */
  async skipTime(duration: Duration): Promise<Date> {
    const now = this.clock.advance(duration);
    await this.wakeDue();
    return now;
  }

  /** Moves the workflow clock forward to `at` (a record date, a deadline) and wakes what is due. */
  async skipTo(at: Date): Promise<Date> {
    const now = this.clock.advanceTo(at);
    await this.wakeDue();
    return now;
  }

  /** The workflows the kit's runner registered (what `replayHistory` replays against by default). */
  get workflows(): WorkflowRegistry {
    return this.registry;
  }

  /**
   * Wakes waiting executions whose wake-up time the workflow clock has passed. Also run every
   * {@link DUE_POLL_MS} ms, so a run that parked while time was being skipped is not left behind.
   */
  private async wakeDue(): Promise<void> {
    if (this.stopped || !this.clock.skipped) return;
    for (const due of await executionsDueBy(this.pool, this.clock.date())) {
      await this.engine.queue.wake(due.id, due.workflow);
    }
  }

  /** Stops the runner and closes every connection; the Redis keys under the kit's prefix are deleted. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.duePoll);
    await this.release();
  }
}

async function loadChainBoundary() {
  const [{ createRunnerChainBoundary }, { nonceEntity }] = await Promise.all([
    import("../chain/runner-chain-boundary.js"),
    import("../chain/nonce-entity.js"),
  ]);
  return { createRunnerChainBoundary, nonceEntity };
}

/** Deletes the keys under `prefix` with SCAN and UNLINK (never FLUSHDB: the server may be shared). */
async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 500);
    if (keys.length > 0) await redis.unlink(...keys);
    cursor = next;
  } while (cursor !== "0");
}

/** Starts a {@link TestKit}: `const kit = await startTestKit({ databaseUrl, redisUrl, workflows })`. */
export function startTestKit(options: TestKitOptions): Promise<TestKit> {
  return TestKit.start(options);
}
