import { ConfigError } from "../config/config-error.js";
import { CONFIG_ERRORS } from "../config/config-error-codes.js";
import { loadConfig } from "../config/load-config.js";
import { parseRole, type Role } from "../config/role.js";
import type { TenorConfig } from "../config/schema.js";
import { tracingSummary } from "../config/telemetry.js";
import { toTenorError } from "../errors/tenor-error.js";
import type { HealthState } from "../observability/health-server.js";
import { createLogger, republishProcessWarnings } from "../observability/logger.js";
import { createMetrics } from "../observability/metrics.js";
import { assertShardCount } from "../ownership/shard-count-guard.js";
import { pingDatabase } from "../store/pg-pool.js";
import { connectDependencies } from "./dependencies.js";
import type { RoleContext, RoleHandle } from "./role-handle.js";
import { StartupFailed, startWithRelaunch } from "./startup-relaunch.js";

/** Exit codes: 0 clean stop, 1 runtime failure, 2 invalid role or configuration. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** How each role starts; the composition root (workers/) binds them to the application. */
export type RoleStarters = Readonly<Record<Role, (ctx: RoleContext) => Promise<RoleHandle>>>;

export interface ProcessIo {
  env: Readonly<Record<string, string | undefined>>;
  stderr: (text: string) => void;
  exit: (code: number) => void;
  onSignal: (signal: "SIGTERM" | "SIGINT", handler: () => void) => void;
}

/**
 * One process, one role: validate the role and the configuration (exit 2 naming what is wrong),
 * connect, start the role, serve health, and on SIGTERM drain within the grace period and exit 0.
 */
export async function runRoleProcess(io: ProcessIo, starters: RoleStarters): Promise<void> {
  let role: Role;
  let config: TenorConfig;
  try {
    role = parseRole(io.env.DAPI_ROLE);
    config = loadConfig({ env: io.env });
  } catch (error) {
    io.stderr(`tenor: ${(error as Error).message}\n`);
    io.exit(
      error instanceof ConfigError || toTenorError(error).code === CONFIG_ERRORS.ROLE_INVALID
        ? EXIT.usage
        : EXIT.failure,
    );
    return;
  }
  const logger = createLogger({ level: config.logLevel, base: { role } }).child({ component: "main" });
  republishProcessWarnings(logger);
  // One line saying whether this process exports traces, and where (docs/operations.md, "Traces").
  const tracing = tracingSummary(io.env);
  logger.info(tracing.tracing === "on" ? "tracing on" : "tracing off", { ...tracing });
  // `starting` until the role is up: its port is bound first, so /readyz must not say ready early.
  const health: HealthState = { draining: false, starting: true };
  let handle: RoleHandle | undefined;
  let deps: Awaited<ReturnType<typeof connectDependencies>> | undefined;
  // One registry for the process: a relaunched attempt must not register the metrics twice.
  const metrics = createMetrics(role);
  const startOnce = async () => {
    deps = await connectDependencies(config, role);
    const { pool, redis } = deps;
    // Every role, the api too: one release must agree on the shard count (docs/ownership.md, "Shards").
    await assertShardCount(pool, config.durable.sharding.shardCount);
    const readiness = {
      postgresql: () => pingDatabase(pool),
      redis: async () => void (await redis.ping()),
    };
    return starters[role]({
      config,
      logger: logger.child({ component: role }),
      deps,
      health,
      readiness,
      metrics,
      secrets: { env: io.env },
    });
  };
  const cleanup = async () => {
    await deps?.close();
    deps = undefined;
  };
  try {
    handle = await startWithRelaunch(startOnce, cleanup, { policy: config.startup, logger });
    handle.ready?.();
    health.starting = false;
  } catch (error) {
    const failure = error instanceof StartupFailed ? error.failure : toTenorError(error);
    const attempts = error instanceof StartupFailed ? error.attempts : 1;
    logger.error("role failed to start", { code: failure.code, error: failure.message, attempts });
    io.stderr(`tenor: ${role} failed to start after ${attempts} attempt(s): ${failure.message}\n`);
    await cleanup();
    io.exit(EXIT.failure);
    return;
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    health.draining = true;
    const { graceMs, readinessDelayMs } = config.shutdown;
    logger.info("draining", { signal, graceMs, readinessDelayMs });
    const timer = setTimeout(() => {
      logger.error("drain exceeded the grace period; exiting", { graceMs });
      io.exit(EXIT.failure);
    }, graceMs);
    timer.unref();
    try {
      // Readiness is 503 from here on; keep working until load balancers have seen it.
      if (readinessDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, readinessDelayMs));
      await handle?.stop();
      await deps?.close();
      clearTimeout(timer);
      logger.info("stopped");
      io.exit(EXIT.ok);
    } catch (error) {
      logger.error("shutdown failed", { error: (error as Error).message });
      io.exit(EXIT.failure);
    }
  };
  io.onSignal("SIGTERM", () => void shutdown("SIGTERM"));
  io.onSignal("SIGINT", () => void shutdown("SIGINT"));
}
