import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort, spawnProcess, type TestProcess } from "../support/processes.js";

/**
 * A redis-server of the test's own, on a free port, for faults that must never touch the shared
 * Redis on 6379 (FLUSHALL, a kill and restart). `restart()` starts it again on the same port and
 * directory, so with `appendonly` it reloads what it had written.
 */
export interface OwnRedis {
  url: string;
  port: number;
  process(): TestProcess;
  /** SIGKILLs the server and waits until it is gone. */
  kill(): Promise<void>;
  /** Starts the server again on the same port and data directory and waits until it accepts connections. */
  restart(): Promise<void>;
  /** Kills the server and removes its directory. */
  stop(): Promise<void>;
}

export async function startOwnRedis(options: { appendOnly: boolean }): Promise<OwnRedis> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "tenor-redis-"));
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--daemonize",
    "no",
    "--dir",
    dir,
    "--maxmemory-policy",
    "noeviction",
    ...(options.appendOnly ? ["--appendonly", "yes"] : ["--appendonly", "no"]),
  ];
  let server: TestProcess;
  const launch = async () => {
    server = spawnProcess(`redis-server :${port}`, "redis-server", args);
    await server.waitFor(/Ready to accept connections/, 15_000);
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    process: () => server,
    kill: () => server.kill(),
    async restart() {
      await launch();
    },
    async stop() {
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
