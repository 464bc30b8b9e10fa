import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { freePort } from "./ports.js";
import { spawnProcess, type TestProcess } from "./processes.js";

/**
 * A real PgBouncer (Debian's `pgbouncer` package; `npm test`'s setup step installs it) started for one test
 * file, in front of the local PostgreSQL. Every database name is forwarded to the server
 * (`* = host=… port=…`), authentication is `trust` with the user listed in its own userlist, so a
 * test reaches its own database through the pooler by swapping host and port in its URL.
 */

/** Where Debian installs the binary. */
export const PGBOUNCER_BINARY = "/usr/sbin/pgbouncer";

export interface PgBouncerOptions {
  /** `session`, `transaction` or `statement`. */
  poolMode: "session" | "transaction";
  /** Server connections per (database, user) pair; small, so clients share them. Default 4. */
  defaultPoolSize?: number;
  /** Startup parameters PgBouncer drops instead of refusing the client (`ignore_startup_parameters`). */
  ignoreStartupParameters?: readonly string[];
  /** Users allowed on the admin console (database `pgbouncer`: SHOW CLIENTS, SHOW POOLS, ...). */
  adminUsers?: readonly string[];
  /** PostgreSQL behind it. Default 127.0.0.1:5432, user postgres. */
  server?: { host: string; port: number; user: string };
}

export interface PgBouncer {
  port: number;
  /** `pgbouncer --version`'s first line, e.g. "PgBouncer 1.18.0". */
  version: string;
  /** `url` with its host and port replaced by this PgBouncer's. */
  via(url: string): string;
  /** Rows of an admin console command (`SHOW CLIENTS`, ...); needs `adminUsers`. */
  admin(command: string): Promise<Record<string, unknown>[]>;
  process: TestProcess;
  stop(): Promise<void>;
}

/** True when the Debian binary is installed. */
export function pgbouncerInstalled(): boolean {
  return existsSync(PGBOUNCER_BINARY);
}

/**
 * Starts PgBouncer on a free port and waits until it listens. PgBouncer refuses to run as root:
 * as root (CI) it is started with `-u postgres`, which is why its files are world-readable.
 */
export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const server = options.server ?? { host: "127.0.0.1", port: 5432, user: "postgres" };
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "tenor-pgbouncer-"));
  chmodSync(dir, 0o755);
  const userlist = path.join(dir, "userlist.txt");
  writeFileSync(userlist, `"${server.user}" ""\n`, { mode: 0o644 });
  const ini = path.join(dir, "pgbouncer.ini");
  const lines = [
    "[databases]",
    `* = host=${server.host} port=${server.port}`,
    "[pgbouncer]",
    "listen_addr = 127.0.0.1",
    `listen_port = ${port}`,
    "unix_socket_dir =",
    "auth_type = trust",
    `auth_file = ${userlist}`,
    `pool_mode = ${options.poolMode}`,
    `default_pool_size = ${options.defaultPoolSize ?? 4}`,
    "max_client_conn = 500",
    // Test databases are dropped WITH (FORCE) while PgBouncer may still hold server connections.
    "server_login_retry = 1",
    "log_connections = 0",
    "log_disconnections = 0",
    ...(options.adminUsers?.length ? [`admin_users = ${options.adminUsers.join(",")}`] : []),
    ...(options.ignoreStartupParameters?.length
      ? [`ignore_startup_parameters = ${options.ignoreStartupParameters.join(",")}`]
      : []),
  ];
  writeFileSync(ini, `${lines.join("\n")}\n`, { mode: 0o644 });
  const version = execFileSync(PGBOUNCER_BINARY, ["--version"], { encoding: "utf8" }).split("\n")[0] ?? "";
  const asRoot = process.getuid?.() === 0;
  const child = spawnProcess("pgbouncer", PGBOUNCER_BINARY, [...(asRoot ? ["-u", "postgres"] : []), ini]);
  try {
    await child.waitFor(/process up|listening on 127\.0\.0\.1/, 10_000);
  } catch (error) {
    await child.kill();
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`pgbouncer did not start: ${(error as Error).message}\n${child.stderr()}`);
  }
  return {
    port,
    version,
    via(url) {
      const parsed = new URL(url);
      parsed.hostname = "127.0.0.1";
      parsed.port = String(port);
      return parsed.toString();
    },
    async admin(command) {
      const client = new pg.Client({
        connectionString: `postgresql://${server.user}@127.0.0.1:${port}/pgbouncer`,
      });
      await client.connect();
      try {
        return (await client.query(command)).rows;
      } finally {
        await client.end();
      }
    },
    process: child,
    async stop() {
      await child.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
