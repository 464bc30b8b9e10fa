import { type ChildProcess, execFile, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { API_KEY_PREFIX } from "../../src/api/auth/api-key.js";
import { freePort } from "../../test/support/ports.js";
import { sleep } from "./concurrency.js";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const MAIN = join(REPO_ROOT, "dist/workers/main.js");
const CLI = join(REPO_ROOT, "dist/scripts/tenor.js");
const run = promisify(execFile);

/**
 * How long a stopped role gets to drain before SIGKILL, in ms: the product's own bound
 * (`shutdown.graceMs`, 10 s by default) plus time to exit.
 */
const STOP_GRACE_MS = 15_000;
/** How long a role may take to report ready, in ms: a loaded machine spawns slowly. */
const READY_TIMEOUT_MS = 60_000;
/** Lines of a failed role's log quoted in the error. */
const LOG_TAIL_LINES = 15;

let build: Promise<void> | null = null;

/**
 * Compiles the release (`npm run build`) once per bench process, so the roles run exactly the
 * JavaScript `npm start` would and never a dist/ older than the sources. Later calls share the
 * first build.
 */
export function buildOnce(): Promise<void> {
  build ??= run("npm", ["run", "--silent", "build"], { cwd: REPO_ROOT, maxBuffer: 16 << 20 }).then(
    () => undefined,
    (error: Error & { stdout?: string; stderr?: string }) => {
      throw new Error(`npm run build failed: ${error.stdout ?? ""}${error.stderr ?? error.message}`);
    },
  );
  return build;
}

let benchDir: string | null = null;

/** The bench process's own temporary folder for role logs and configuration files. */
function roleDir(): string {
  benchDir ??= mkdtempSync(join(tmpdir(), `tenor-bench-roles-${process.pid}-`));
  return benchDir;
}

/** Removes the folder once no role has a file in it; the next spawn makes a new one. */
function releaseRoleDir(): void {
  if (!benchDir) return;
  try {
    rmdirSync(benchDir);
    benchDir = null;
  } catch {
    // Another role's files, or a kept log, are still there.
  }
}

let spawned = 0;

export interface DeployedRoleOptions {
  role: "runner" | "api";
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  /**
   * A configuration file (`TENOR_CONFIG`) for what a workload sets beyond the product defaults;
   * unset, the role runs on the defaults alone. A workload states every key it sets in its params.
   */
  config?: Record<string, unknown>;
  /** Environment the configuration's secrets are read from (`{ env: NAME }` sources). */
  secrets?: Record<string, string>;
}

/**
 * A Tenor role from the compiled build, `node dist/workers/main.js` with `DAPI_ROLE`, as a
 * deployment runs it: the environment holds only the connection URLs, the Redis prefix, the ports
 * and log level `info` (the default, stated), so metrics, runner liveness, the webhook dispatcher,
 * the confirmation watcher and the schedules all run as they do in production. Its output goes to
 * a log file in the bench's temporary folder, deleted after a clean stop and kept (its path in
 * every error) otherwise.
 */
export class DeployedRole {
  private kept = false;
  private spawnError: Error | null = null;
  private readonly exited: Promise<void>;

  private constructor(
    readonly role: "runner" | "api",
    private readonly child: ChildProcess,
    /** The health port: /livez, /readyz, /metrics. */
    readonly healthPort: number,
    /** The public API port (api only). */
    readonly apiPort: number | null,
    readonly logPath: string,
    private readonly files: readonly string[],
  ) {
    this.exited = new Promise((resolve) => child.once("exit", () => resolve()));
    child.once("error", (error) => {
      this.spawnError = error;
    });
  }

  get pid(): number {
    return this.child.pid as number;
  }

  /**
   * Builds the release if this process has not yet, spawns the role and resolves once its
   * health server answers /readyz with 200.
   * @throws Error naming the log when the role exits or is not ready within 60 s.
   */
  static async spawn(options: DeployedRoleOptions): Promise<DeployedRole> {
    await buildOnce();
    const label = `${options.role}-${++spawned}`;
    const dir = roleDir();
    const logPath = join(dir, `${label}.log`);
    const files = [logPath];
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      DAPI_ROLE: options.role,
      DATABASE_URL: options.databaseUrl,
      REDIS_URL: options.redisUrl,
      TENOR_REDIS_PREFIX: options.prefix,
      TENOR_LOG_LEVEL: "info",
      ...options.secrets,
    };
    if (options.config) {
      const configPath = join(dir, `${label}.yaml`);
      // JSON is YAML.
      writeFileSync(configPath, JSON.stringify(options.config));
      files.push(configPath);
      env.TENOR_CONFIG = configPath;
    }
    const healthPort = await freePort();
    let apiPort: number | null = null;
    if (options.role === "api") {
      apiPort = await freePort();
      env.TENOR_API_PORT = String(apiPort);
      env.TENOR_API_HEALTH_PORT = String(healthPort);
    } else {
      env.TENOR_RUNNER_HEALTH_PORT = String(healthPort);
    }
    const log = openSync(logPath, "a");
    const child = spawn(process.execPath, [MAIN], { cwd: REPO_ROOT, env, stdio: ["ignore", log, log] });
    closeSync(log);
    const role = new DeployedRole(options.role, child, healthPort, apiPort, logPath, files);
    try {
      await role.until("report ready", READY_TIMEOUT_MS, async () => {
        const res = await fetch(`http://127.0.0.1:${healthPort}/readyz`).catch(() => null);
        return res?.status === 200;
      });
    } catch (error) {
      role.keepLog();
      await role.stop();
      throw error;
    }
    return role;
  }

  /** The role's Prometheus text from its health port. */
  async metrics(): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${this.healthPort}/metrics`);
    if (!res.ok) throw this.failure(`answered /metrics with ${res.status}`);
    return res.text();
  }

  /** Shards this runner owns (`tenor_shards_owned{domain="runner"}`); 0 before it owns any. */
  async shardsOwned(): Promise<number> {
    const text = await this.metrics().catch(() => "");
    return Number(text.match(/^tenor_shards_owned\{[^}]*domain="runner"[^}]*\} (\d+)/m)?.[1] ?? 0);
  }

  /** CPU seconds the role has used (`tenor_process_cpu_seconds_total`, user + system). */
  async cpuSeconds(): Promise<number> {
    const text = await this.metrics();
    return Number(
      text.match(/^tenor_process_cpu_seconds_total(?:\{[^}]*\})? ([0-9.e+-]+)/m)?.[1] ?? Number.NaN,
    );
  }

  /** Keeps the log after the stop, whatever the exit: a workload saw something wrong. */
  keepLog(): void {
    this.kept = true;
  }

  /** `runner pid 123 (log /tmp/…)`, for error messages. */
  describe(): string {
    return `${this.role} pid ${this.pid} (log ${this.logPath})`;
  }

  /**
   * SIGTERM (the product's drain), then SIGKILL past 15 s. Deletes the log and configuration
   * after a clean exit (0) unless {@link keepLog} was called; resolves with whether it was clean.
   */
  async stop(): Promise<{ clean: boolean }> {
    if (this.running()) {
      this.child.kill("SIGTERM");
      const timer = setTimeout(() => this.child.kill("SIGKILL"), STOP_GRACE_MS);
      await this.exited;
      clearTimeout(timer);
    }
    const clean = this.child.exitCode === 0;
    if (clean && !this.kept) {
      for (const file of this.files) rmSync(file, { force: true });
      releaseRoleDir();
    }
    return { clean };
  }

  /**
   * Polls `check` every 100 ms until it returns true.
   * @throws Error naming the role, what it did not do, and its log, when the role exits first or
   * `timeoutMs` passes.
   */
  async until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.running())
        throw this.failure(
          `exited (${this.spawnError?.message ?? this.child.exitCode ?? this.child.signalCode}) while waiting to ${what}`,
        );
      if (await check()) return;
      if (Date.now() >= deadline) throw this.failure(`did not ${what} within ${timeoutMs} ms`);
      await sleep(100);
    }
  }

  /** An error naming the role and its log, quoting the log's last lines; the log is kept. */
  failure(what: string): Error {
    this.keepLog();
    let tail = "";
    try {
      tail = readFileSync(this.logPath, "utf8").trimEnd().split("\n").slice(-LOG_TAIL_LINES).join("\n");
    } catch {
      // No log yet.
    }
    return new Error(`${this.describe()} ${what}${tail ? `; last lines:\n${tail}` : ""}`);
  }

  /** Whether the process has started and not exited. */
  running(): boolean {
    return this.spawnError === null && this.child.exitCode === null && this.child.signalCode === null;
  }
}

/**
 * Resolves once the runners between them own all `shardCount` shards, each at least one (the
 * shard owners have balanced): shard-scoped work (the confirmation watcher, chain work) only runs
 * on owned shards.
 */
export async function untilShardsOwned(
  runners: readonly DeployedRole[],
  shardCount: number,
  timeoutMs = READY_TIMEOUT_MS,
): Promise<void> {
  const [first] = runners;
  if (!first) return;
  await first.until(`own all ${shardCount} shards with ${runners.length} runner(s)`, timeoutMs, async () => {
    const gone = runners.find((r) => !r.running());
    if (gone) throw gone.failure("exited while the runners balanced their shards");
    const owned = await Promise.all(runners.map((r) => r.shardsOwned()));
    return owned.every((n) => n > 0) && owned.reduce((a, b) => a + b, 0) === shardCount;
  });
}

/**
 * An API key issued by the product CLI of the build (`node dist/scripts/tenor.js keys create`),
 * as an operator issues one; the CLI prints the key alone on stdout.
 */
export async function issueKeyWithCli(
  databaseUrl: string,
  request: { org: string; role: string; subject: string },
): Promise<string> {
  await buildOnce();
  const { stdout } = await run(
    process.execPath,
    [CLI, "keys", "create", "--org", request.org, "--role", request.role, "--subject", request.subject],
    { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? "", DATABASE_URL: databaseUrl } },
  );
  const key = stdout.trim();
  if (!key.startsWith(API_KEY_PREFIX))
    throw new Error(`tenor keys create printed no key: ${JSON.stringify(stdout)}`);
  return key;
}
