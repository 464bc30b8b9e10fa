import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RunnerMemory } from "../tenor-runner.js";

const RUNNER_SCRIPT = fileURLToPath(new URL("../tenor-runner.ts", import.meta.url));
const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A spawned bench/tenor-runner.ts, talking over IPC. */
export class RunnerProcess {
  private constructor(private readonly child: ChildProcess) {}

  get pid(): number {
    return this.child.pid as number;
  }

  /**
   * Spawns a runner with its own configuration file (`durable` overrides as YAML) and resolves
   * once it reports ready. stderr is passed through so a crash is visible.
   */
  static async spawn(options: {
    databaseUrl: string;
    redisUrl: string;
    prefix: string;
    durable: Record<string, unknown>;
    timeoutMs?: number;
    /** Runner liveness (default on, as the runner role); off: takeover by lock expiry only. */
    liveness?: boolean;
  }): Promise<RunnerProcess> {
    const dir = mkdtempSync(join(tmpdir(), "tenor-bench-"));
    const configPath = join(dir, "runner.yaml");
    writeFileSync(configPath, JSON.stringify({ logLevel: "error", durable: options.durable }));
    const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", RUNNER_SCRIPT], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        DATABASE_URL: options.databaseUrl,
        REDIS_URL: options.redisUrl,
        TENOR_REDIS_PREFIX: options.prefix,
        TENOR_CONFIG: configPath,
        BENCH_RUNNER_LIVENESS: options.liveness === false ? "off" : "on",
      },
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    });
    const runner = new RunnerProcess(child);
    await runner.next("ready", options.timeoutMs ?? 30_000);
    return runner;
  }

  /** Heap and RSS after full garbage collections in the runner. */
  async memory(): Promise<RunnerMemory> {
    const reply = this.next("memory", 30_000);
    this.child.send({ type: "memory" });
    return (await reply) as RunnerMemory;
  }

  /** SIGKILL: no shutdown, no lock release; resolves when the process is gone. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.kill("SIGKILL");
    await exited;
  }

  /** Graceful stop, then SIGKILL if it takes longer than `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.send({ type: "stop" });
    const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
  }

  private next(type: string, timeoutMs: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`runner ${this.child.pid} sent no ${type} within ${timeoutMs} ms`));
      }, timeoutMs);
      const onMessage = (message: { type?: string }) => {
        if (message.type !== type) return;
        cleanup();
        resolve(message);
      };
      const onExit = (code: number | null, signal: string | null) => {
        cleanup();
        reject(new Error(`runner exited (${code ?? signal}) before sending ${type}`));
      };
      const cleanup = () => {
        clearTimeout(timer);
        this.child.off("message", onMessage);
        this.child.off("exit", onExit);
      };
      this.child.on("message", onMessage);
      this.child.once("exit", onExit);
    });
  }
}
