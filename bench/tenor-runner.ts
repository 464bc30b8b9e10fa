/**
 * A real Tenor runner process for the benchmark's crash (W5) and memory (W7) workloads: the
 * production runner engine with the bench workflows registered.
 *
 * Usage: node --expose-gc --import tsx bench/tenor-runner.ts, spawned with an IPC channel.
 * Env: DATABASE_URL, REDIS_URL, TENOR_REDIS_PREFIX, TENOR_CONFIG (as every role reads them).
 * Sends `{ type: "ready", pid }` once the engine runs; answers `{ type: "memory" }` with the
 * process's memory after full garbage collections.
 */
import pg from "pg";
import { loadConfig } from "../src/config/load-config.js";
import { WorkflowRegistry } from "../src/engine/registry.js";
import { createLogger } from "../src/observability/logger.js";
import { startRunnerLiveness } from "../src/ownership/runner-liveness.js";
import { connectDependencies } from "../src/roles/dependencies.js";
import { startRunnerEngine } from "../src/roles/runner-engine.js";
import { BENCH_WORKFLOWS, bindEffects } from "./workflows.js";

/** What the runner answers to `{ type: "memory" }`, in bytes. */
export interface RunnerMemory {
  type: "memory";
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

const config = loadConfig({ env: process.env });
const logger = createLogger({ level: "error", base: { role: "runner" } });
const deps = await connectDependencies(config, "runner");
const effectsPool = new pg.Pool({
  connectionString: config.databaseUrl,
  max: 10,
  application_name: "bench-effects",
});
effectsPool.on("error", () => undefined);
bindEffects(effectsPool);

const engine = await startRunnerEngine({
  config,
  registry: new WorkflowRegistry(BENCH_WORKFLOWS),
  logger,
  pool: deps.pool,
  workerRedis: deps.workerRedis,
  producerRedis: deps.redis,
});
// As the runner role: when this runner is killed, a survivor moves its jobs at once (W5).
// BENCH_RUNNER_LIVENESS=off runs without it, for W5's same-run baseline of lock-expiry takeover.
const liveness =
  process.env.BENCH_RUNNER_LIVENESS === "off"
    ? null
    : await startRunnerLiveness({
        config,
        redis: deps.redis,
        workers: engine.workers,
        logger,
        onTakeover: engine.reportTakeover,
      });

function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("run with --expose-gc");
  for (let i = 0; i < 3; i++) gc();
}

process.on("message", (message: { type?: string }) => {
  if (message.type === "memory") {
    collectGarbage();
    const m = process.memoryUsage();
    const reply: RunnerMemory = {
      type: "memory",
      rss: m.rss,
      heapUsed: m.heapUsed,
      external: m.external,
      arrayBuffers: m.arrayBuffers,
    };
    process.send?.(reply);
  }
  if (message.type === "stop") {
    void (async () => {
      await engine.stop();
      await liveness?.stop();
      await Promise.allSettled([deps.close(), effectsPool.end()]);
      process.exit(0);
    })();
  }
});

process.send?.({ type: "ready", pid: process.pid });
