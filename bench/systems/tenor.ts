import type { Redis } from "ioredis";
import type { Pool } from "pg";
import { loadConfig } from "../../src/config/load-config.js";
import type { TenorConfig } from "../../src/config/schema.js";
import type { ExecutionClient } from "../../src/engine/execution-client.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { createLogger, type Logger } from "../../src/observability/logger.js";
import { createExecutionClient } from "../../src/roles/create-execution-client.js";
import { type RunnerEngine, startRunnerEngine } from "../../src/roles/runner-engine.js";
import { createPgPool } from "../../src/store/pg-pool.js";
import { createRedisConnection } from "../../src/transport/redis-connection.js";
import { expectResult } from "../lib/checked-result.js";
import { nowMs } from "../lib/concurrency.js";
import { BENCH_WORKFLOWS } from "../workflows.js";

/** `durable.*` overrides a workload may set; the rest are the product defaults. */
export type DurableOverrides = Record<string, unknown>;

export interface TenorOptions {
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  durable?: DurableOverrides;
  /** Start a runner engine in this process (default true). */
  runner?: boolean;
}

/** How long a client waits for one execution to finish before the sample is an error. */
const WAIT_TIMEOUT_MS = 120_000;

/**
 * Starts `workflow` and waits for it as a client of Tenor does: `ExecutionClient.start`, then
 * `waitForTerminal` (the runner's announcement, then the read that answers). Resolves with the
 * performance.now() at which the client held the result, once it is checked: an execution that
 * failed, did not finish within two minutes, or completed with another output than `expected` is
 * an error, never a completion.
 */
export async function runExecution(
  client: ExecutionClient,
  workflow: string,
  input: unknown,
  expected: unknown,
): Promise<{ executionId: string; completedAt: number }> {
  const startedAt = Date.now();
  const { executionId } = await client.start({ workflow, input });
  const view = await client.waitForTerminal(executionId, WAIT_TIMEOUT_MS, undefined, { startedAt });
  const completedAt = nowMs();
  if (view.status !== "completed")
    throw new Error(
      `${workflow} ${executionId} ended ${view.status}${view.failure ? `: ${view.failure.message}` : ""}`,
    );
  expectResult(`${workflow} ${executionId}`, view.output, expected);
  return { executionId, completedAt };
}

/**
 * Tenor wired exactly as the runner role wires it (product config defaults, the `pg` pool of
 * src/store, two Redis connections), in the benchmark process, with the client an API role builds
 * (createExecutionClient: the executions queue and the runners' finished notifications).
 */
export class TenorSystem {
  readonly config: TenorConfig;
  readonly pool: Pool;
  readonly registry = new WorkflowRegistry(BENCH_WORKFLOWS);
  readonly logger: Logger = createLogger({ level: "error" });
  readonly client: ExecutionClient;
  private readonly producerRedis: Redis;
  private readonly workerRedis: Redis;
  private readonly closeClient: () => Promise<void>;
  private engine: RunnerEngine | null = null;

  private constructor(options: TenorOptions) {
    this.config = loadConfig({
      env: {
        DATABASE_URL: options.databaseUrl,
        REDIS_URL: options.redisUrl,
        TENOR_REDIS_PREFIX: options.prefix,
        TENOR_CONFIG: "bench.yaml",
      },
      // JSON is YAML: the bench passes its overrides as the configuration file's content.
      readFile: () => JSON.stringify({ logLevel: "error", durable: options.durable ?? {} }),
    });
    this.pool = createPgPool(this.config.databaseUrl, { applicationName: "tenor-bench" });
    this.producerRedis = createRedisConnection(this.config.redisUrl, "producer");
    this.workerRedis = createRedisConnection(this.config.redisUrl, "worker");
    const side = createExecutionClient({
      pool: this.pool,
      redis: this.producerRedis,
      prefix: this.config.redisPrefix,
      registry: this.registry,
      logger: this.logger,
    });
    this.client = side.client;
    this.closeClient = side.close;
  }

  static async start(options: TenorOptions): Promise<TenorSystem> {
    const system = new TenorSystem(options);
    if (options.runner ?? true) await system.startRunner();
    return system;
  }

  async startRunner(): Promise<void> {
    this.engine = await startRunnerEngine({
      config: this.config,
      registry: this.registry,
      logger: this.logger,
      pool: this.pool,
      workerRedis: this.workerRedis,
      producerRedis: this.producerRedis,
    });
  }

  /**
   * Runs `workflow` as a client of Tenor does and resolves when that client holds the checked
   * result: {@link runExecution} on this system's client.
   */
  run(
    workflow: string,
    input: unknown,
    expected: unknown,
  ): Promise<{ executionId: string; completedAt: number }> {
    return runExecution(this.client, workflow, input, expected);
  }

  /** One `bench.noop-chain` of `steps` steps: start call to its checked output, in ms. */
  async chain(steps: number): Promise<number> {
    const started = nowMs();
    const { completedAt } = await this.run("bench.noop-chain", { steps }, { done: steps });
    return completedAt - started;
  }

  async stop(): Promise<void> {
    await this.engine?.stop().catch(() => undefined);
    await this.closeClient().catch(() => undefined);
    this.producerRedis.disconnect();
    this.workerRedis.disconnect();
    await this.pool.end().catch(() => undefined);
  }
}
