/**
 * The API role's app in a process of its own for W13 (bench/workloads/w13-admission.ts), so the
 * load generator does not share its event loop. Talks over IPC: sends `{ type: "ready", port,
 * key }` (an integrator key of org `bench`), stops on `{ type: "stop" }`.
 * Env: DATABASE_URL, REDIS_URL, TENOR_REDIS_PREFIX, W13_POOL_MAX, W13_ADMISSION (JSON
 * AdmissionSettings, or empty for admission off).
 */
import type { AddressInfo } from "node:net";
import type { AdmissionSettings } from "../src/api/admission.js";
import { issueApiKey } from "../src/api/auth/api-key.js";
import { loadConfig } from "../src/config/load-config.js";
import { WorkflowRegistry } from "../src/engine/registry.js";
import { createLogger } from "../src/observability/logger.js";
import { createPlatformApi } from "../src/roles/platform-api.js";
import { createPgPool } from "../src/store/pg-pool.js";
import { createRedisConnection } from "../src/transport/redis-connection.js";
import { BENCH_WORKFLOWS } from "./workflows.js";

const config = loadConfig({ env: process.env });
const admission = process.env.W13_ADMISSION
  ? (JSON.parse(process.env.W13_ADMISSION) as AdmissionSettings)
  : undefined;
const pool = createPgPool(config.databaseUrl, {
  applicationName: "tenor-bench-w10",
  max: Number(process.env.W13_POOL_MAX ?? 4),
});
const redis = createRedisConnection(config.redisUrl, "producer");
const api = createPlatformApi({
  // The rate limit is another control; W10 measures admission alone.
  settings: { ...config.api, rateLimit: { max: 1_000_000_000, windowSeconds: 60 } },
  pool,
  redis,
  prefix: config.redisPrefix,
  registry: new WorkflowRegistry(BENCH_WORKFLOWS),
  logger: createLogger({ level: "error" }),
  readiness: {},
  health: { draining: false },
  ...(admission ? { admission } : {}),
});
const { key } = await issueApiKey(api.keys, {
  orgId: "bench",
  role: "integrator",
  name: "w10",
  subject: "w10",
});
const server = api.app.listen(0, "127.0.0.1");
await new Promise((resolve) => server.once("listening", resolve));
// As the api role does once it is ready: the lag of building the app is startup's, not the load's.
api.ready();
process.on("message", (message: { type?: string }) => {
  if (message.type !== "stop") return;
  server.closeAllConnections();
  server.close(() => {
    void Promise.allSettled([api.close(), pool.end()]).then(() => {
      redis.disconnect();
      process.exit(0);
    });
  });
});
process.send?.({ type: "ready", port: (server.address() as AddressInfo).port, key });
