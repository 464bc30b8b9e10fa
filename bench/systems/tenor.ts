import type { Redis } from "ioredis";
import type { Pool } from "pg";
import { loadConfig } from "../../src/config/load-config.js";
import type { TenorConfig } from "../../src/config/schema.js";
import type { ExecutionClient } from "../../src/engine/execution-client.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { createLogger, type Logger } from "../../src/observability/logger.js";
import { createExecutionClient } from "../../src/roles/create-execution-client.js";
import { type RunnerRuntime, startRunnerRuntime } from "../../src/roles/runner-runtime.js";
import { finishedChannel } from "../../src/runtime/execution-finished.js";
import { createPgPool } from "../../src/store/pg-pool.js";
import { createRedisConnection } from "../../src/transport/redis-connection.js";
import { BENCH_WORKFLOWS } from "../workflows.js";

/** `durable.*` overrides a workload may set; the rest are the product defaults. */
export type DurableOverrides = Record<string, unknown>;

export interface TenorOptions {
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  durable?: DurableOverrides;
  /** Start a runner runtime in this process (default true). */
  runner?: boolean;
}

/**
 * Tenor wired exactly as the runner role wires it (product config defaults, the `pg` pool of
 * src/store, two Redis connections), in the benchmark process, plus a completion listener on the
 * runners' announcements of finished executions.
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
  private runtime: RunnerRuntime | null = null;
  private subscriber: Redis | null = null;
  private readonly waiters = new Map<string, (at: number) => void>();
  private readonly finishedEarly = new Map<string, number>();

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
    this.runtime = await startRunnerRuntime({
      config: this.config,
      registry: this.registry,
      logger: this.logger,
      pool: this.pool,
      workerRedis: this.workerRedis,
      producerRedis: this.producerRedis,
    });
  }

  /**
   * Listens for finished executions as a client of Tenor learns of them: the runner's
   * announcement, published once the terminal status has committed (src/runtime/execution-finished.ts).
   * Call before {@link run}.
   */
  async listenForCompletions(): Promise<void> {
    const subscriber = this.producerRedis.duplicate();
    this.subscriber = subscriber;
    subscriber.on("message", (_channel: string, executionId: string) => {
      const waiter = this.waiters.get(executionId);
      if (!waiter) {
        this.finishedEarly.set(executionId, performance.now());
        return;
      }
      this.waiters.delete(executionId);
      waiter(performance.now());
    });
    await subscriber.subscribe(finishedChannel(this.config.redisPrefix));
  }

  /**
   * Starts `workflow` and resolves with the performance.now() at which its job completed.
   * A completion seen before the caller registered (impossible in practice) is kept until read.
   */
  async run(workflow: string, input: unknown): Promise<{ executionId: string; completedAt: number }> {
    const { executionId } = await this.client.start({ workflow, input });
    const seen = this.finishedEarly.get(executionId);
    if (seen !== undefined) {
      this.finishedEarly.delete(executionId);
      return { executionId, completedAt: seen };
    }
    const completedAt = await new Promise<number>((resolve) => this.waiters.set(executionId, resolve));
    return { executionId, completedAt };
  }

  async stop(): Promise<void> {
    await this.runtime?.stop().catch(() => undefined);
    this.subscriber?.disconnect();
    await this.closeClient().catch(() => undefined);
    this.producerRedis.disconnect();
    this.workerRedis.disconnect();
    await this.pool.end().catch(() => undefined);
  }
}
