/**
 * The image's HEALTHCHECK: asks the role in this container (DAPI_ROLE) for /readyz on the port its
 * configuration gives it, so Docker's health status means the same as the compose and Kubernetes
 * readiness probes. Compiled to dist/scripts/healthcheck.js; exit 0 ready, 1 not ready or no answer
 * within 3 s, 2 no valid role or configuration.
 */
import { loadConfig } from "../src/config/load-config.js";
import { parseRole, type Role } from "../src/config/role.js";
import type { TenorConfig } from "../src/config/schema.js";

const PORTS: Record<Role, (config: TenorConfig) => number> = {
  api: (config) => config.api.port,
  runner: (config) => config.runner.healthPort,
  indexer: (config) => config.indexer.healthPort,
};

let url: string;
try {
  const role = parseRole(process.env.DAPI_ROLE);
  url = `http://127.0.0.1:${PORTS[role](loadConfig({ env: process.env }))}/readyz`;
} catch (error) {
  process.stderr.write(`healthcheck: ${(error as Error).message}\n`);
  process.exit(2);
}
try {
  const response = await fetch(url, { signal: AbortSignal.timeout(3_000) });
  process.exit(response.status === 200 ? 0 : 1);
} catch (error) {
  process.stderr.write(`healthcheck: ${url}: ${(error as Error).message}\n`);
  process.exit(1);
}
