/**
 * The Platform API as its own process for the benchmark's `Prefer: wait` workload (W11), as the
 * api role runs it (a separate process from the runners), with the bench workflows registered.
 * The API's modules declare the chain workflows, which a runner in the same process would refuse
 * to start without; a process of its own keeps the bench's in-process runners unaffected.
 *
 * Usage: node --import tsx bench/tenor-api.ts. Env: DATABASE_URL, REDIS_URL, TENOR_REDIS_PREFIX.
 * Prints `{"ready":true,"port":<port>,"key":"<integrator API key>"}` once it listens; SIGTERM stops it.
 */
import type { AddressInfo } from "node:net";
import { issueApiKey } from "../src/api/auth/api-key.js";
import { loadConfig } from "../src/config/load-config.js";
import { WorkflowRegistry } from "../src/engine/registry.js";
import { createLogger } from "../src/observability/logger.js";
import { connectDependencies } from "../src/roles/dependencies.js";
import { createPlatformApi } from "../src/roles/platform-api.js";
import { BENCH_WORKFLOWS } from "./workflows.js";

const config = loadConfig({ env: process.env });
const logger = createLogger({ level: "error", base: { role: "api" } });
const deps = await connectDependencies(config, "api");
const api = createPlatformApi({
  settings: config.api,
  pool: deps.pool,
  redis: deps.redis,
  prefix: config.redisPrefix,
  registry: new WorkflowRegistry(BENCH_WORKFLOWS),
  logger,
  readiness: {},
  health: { draining: false },
});
const { key } = await issueApiKey(api.keys, { orgId: "bench", role: "integrator", subject: "bench" });
const server = api.app.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ ready: true, port, key })}\n`);
});

process.once("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  void api
    .close()
    .then(() => deps.close())
    .finally(() => process.exit(0));
});
