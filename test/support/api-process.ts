import { entryCommand } from "./fast-entry.js";
import { freePort, spawnProcess, type TestProcess } from "./processes.js";
import { redisUrl } from "./redis.js";

/** A real api role process (test/fixtures/api-process.ts) on free ports. */
export interface ApiProcess {
  process: TestProcess;
  /** `http://127.0.0.1:<port>` of the public API. */
  base: string;
  /** `http://127.0.0.1:<port>` of the health port (/readyz, /metrics). */
  health: string;
}

/**
 * Spawns the api role on its own ports against `databaseUrl` and the test Redis under `prefix`;
 * `env` adds to (or overrides) what the role reads. Does not wait for readiness: a test that
 * stops the process during startup decides itself when it looks.
 */
export async function spawnApiProcess(options: {
  databaseUrl: string;
  prefix: string;
  env?: Record<string, string>;
}): Promise<ApiProcess> {
  const [port, healthPort] = [await freePort(), await freePort()];
  const process = spawnProcess("api", ...entryCommand("test/fixtures/api-process.ts"), {
    env: {
      DAPI_ROLE: "api",
      DATABASE_URL: options.databaseUrl,
      REDIS_URL: redisUrl(),
      TENOR_REDIS_PREFIX: options.prefix,
      TENOR_API_PORT: String(port),
      TENOR_API_HEALTH_PORT: String(healthPort),
      ...options.env,
    },
  });
  return { process, base: `http://127.0.0.1:${port}`, health: `http://127.0.0.1:${healthPort}` };
}

/** A /readyz answer: its status and body. */
export async function readyz(
  url: string,
): Promise<{ status: number; body: { status: string; reason?: string } }> {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: (await res.json()) as { status: string; reason?: string } };
}
