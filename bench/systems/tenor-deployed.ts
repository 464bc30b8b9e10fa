import type { Redis } from "ioredis";
import type { Pool } from "pg";
import { demoSteps } from "../../flows/demo-steps.js";
import { loadConfig } from "../../src/config/load-config.js";
import type { TenorConfig } from "../../src/config/schema.js";
import type { ExecutionClient } from "../../src/engine/execution-client.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { createLogger } from "../../src/observability/logger.js";
import { createExecutionClient } from "../../src/roles/create-execution-client.js";
import { createPgPool } from "../../src/store/pg-pool.js";
import { createRedisConnection } from "../../src/transport/redis-connection.js";
import { nowMs } from "../lib/concurrency.js";
import { DeployedRole, issueKeyWithCli, untilShardsOwned } from "../lib/deployed-roles.js";

/** The workflow the deployed build runs for the benchmark: the release's own smoke test. */
export const DEPLOYED_WORKFLOW = demoSteps.name;

/**
 * What the api role gets beyond the product defaults: a per-key rate limit far above anything a
 * run sends, because a throughput benchmark does not test a rate limit; the default budget
 * (`api.rateLimit`, 2000 per 10 s per key) would refuse the starts of a run faster than 200 a
 * second. Admission control keeps its defaults: a closed loop never sends more than its clients,
 * so it must admit them (W13 measures admission past saturation).
 */
export const DEPLOYED_API_CONFIG = {
  api: { rateLimit: { max: 100_000_000, windowSeconds: 60 } },
};

/** Longest a chain may take past its own steps' waits before it counts as lost, in ms. */
const WAIT_SLACK_MS = 60_000;

export interface TenorDeployedOptions {
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  /** Runner processes (default 1). */
  runners?: number;
  /** Also an api process and an integrator key issued by the CLI (default false). */
  api?: boolean;
}

/**
 * Tenor as deployed: runner (and api) processes of the compiled build on product defaults
 * (bench/lib/deployed-roles.ts), and in the bench process what a library user of Tenor holds: a
 * client (`createExecutionClient`) with its own pool and Redis connection, which starts
 * `demo.steps` and waits for its result the way any caller does (`waitForTerminal`, woken by the
 * runners' finished notifications).
 */
export class TenorDeployed {
  private constructor(
    readonly runners: readonly DeployedRole[],
    readonly api: DeployedRole | null,
    /** `http://127.0.0.1:<port>` of the api, when started. */
    readonly apiUrl: string | null,
    /** An integrator key of org `bench` for the api, when started. */
    readonly apiKey: string | null,
    readonly client: ExecutionClient,
    /** The product defaults the roles run on (no configuration file but the api's rate limit). */
    readonly defaults: TenorConfig,
    private readonly pool: Pool,
    private readonly redis: Redis,
    private readonly closeClient: () => Promise<void>,
  ) {}

  /**
   * Spawns the roles one after the other (each ready before the next), waits until the runners
   * own every shard between them, and connects the client.
   * @throws Error naming the role and its log when one does not come up; what started is stopped.
   */
  static async start(options: TenorDeployedOptions): Promise<TenorDeployed> {
    const connection = {
      databaseUrl: options.databaseUrl,
      redisUrl: options.redisUrl,
      prefix: options.prefix,
    };
    const defaults = loadConfig({
      env: {
        DATABASE_URL: options.databaseUrl,
        REDIS_URL: options.redisUrl,
        TENOR_REDIS_PREFIX: options.prefix,
      },
    });
    const roles: DeployedRole[] = [];
    try {
      for (let i = 0; i < (options.runners ?? 1); i++)
        roles.push(await DeployedRole.spawn({ ...connection, role: "runner" }));
      await untilShardsOwned(roles, defaults.durable.sharding.shardCount);
      let api: DeployedRole | null = null;
      let apiKey: string | null = null;
      if (options.api) {
        api = await DeployedRole.spawn({ ...connection, role: "api", config: DEPLOYED_API_CONFIG });
        roles.push(api);
        apiKey = await issueKeyWithCli(options.databaseUrl, {
          org: "bench",
          role: "integrator",
          subject: "bench-client",
        });
      }
      const pool = createPgPool(options.databaseUrl, { applicationName: "tenor-bench-client" });
      const redis = createRedisConnection(options.redisUrl, "producer");
      const side = createExecutionClient({
        pool,
        redis,
        prefix: options.prefix,
        registry: new WorkflowRegistry([demoSteps]),
        logger: createLogger({ level: "error" }),
      });
      return new TenorDeployed(
        roles.filter((r) => r.role === "runner"),
        api,
        api ? `http://127.0.0.1:${api.apiPort}` : null,
        apiKey,
        side.client,
        defaults,
        pool,
        redis,
        side.close,
      );
    } catch (error) {
      await Promise.all(roles.map((r) => r.stop()));
      throw error;
    }
  }

  /**
   * Starts `demo.steps` with `steps` steps of `stepMs` each and waits for its result; resolves with
   * the ms from the start call to the checked result.
   * @throws Error (the runners' logs kept and named) when it did not complete with `done === steps`.
   */
  async chain(steps: number, stepMs = 0): Promise<number> {
    const began = nowMs();
    const startedAt = Date.now();
    const { executionId } = await this.client.start({
      workflow: DEPLOYED_WORKFLOW,
      input: { steps, stepMs },
    });
    const view = await this.client.waitForTerminal(executionId, steps * stepMs + WAIT_SLACK_MS, undefined, {
      startedAt,
    });
    const done = (view.output as { done?: unknown } | null)?.done;
    if (view.status !== "completed" || done !== steps) {
      for (const runner of this.runners) runner.keepLog();
      throw new Error(
        `${DEPLOYED_WORKFLOW} ${executionId} ended ${view.status} with ${JSON.stringify(view.output ?? view.failure)}, expected done ${steps}; ${this.runners.map((r) => r.describe()).join(", ")}`,
      );
    }
    return nowMs() - began;
  }

  /** Stops the api first (no new work), then the runners; closes the client. */
  async stop(): Promise<void> {
    await this.closeClient().catch(() => undefined);
    this.redis.disconnect();
    await this.pool.end().catch(() => undefined);
    await this.api?.stop();
    await Promise.all(this.runners.map((r) => r.stop()));
  }
}
