import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Real child processes for fault tests: spawn, read their output, wait for a line or an exit,
 * signal them by pid. Every process started here is remembered, so `killAllProcesses()` in
 * `afterAll` leaves nothing behind even when a test failed half-way.
 */

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** A spawned process and everything it has printed so far. */
export interface TestProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  stdout(): string;
  stderr(): string;
  /** stdout and stderr interleaved in the order their chunks arrived. */
  output(): string;
  /** Resolves with the first match of `pattern` in stdout + stderr; rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves when the process has exited (at once when it already has). */
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** True until the process has exited. */
  running(): boolean;
  /** Sends `signal` to this process's pid (nothing when it has exited). */
  signal(signal: NodeJS.Signals): void;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
}

const started = new Set<TestProcess>();

export interface SpawnOptions {
  /** The child's whole environment besides PATH and HOME (the test's own is not inherited). */
  env?: Record<string, string>;
  /** Working directory; default the repository root. */
  cwd?: string;
  /** Also open Node's IPC channel (`child.send`, `process.on("message")` in the child). */
  ipc?: boolean;
  /**
   * `"close"`: the process counts as exited only once its stdout and stderr have closed too, so
   * everything it printed has been read (for tests that assert on the last lines). Default
   * `"exit"`: as soon as the process itself has exited, even when a grandchild still holds a pipe.
   */
  settleOn?: "exit" | "close";
}

/**
 * Spawns `command` with `args`; stdout and stderr are captured, stdin is closed. Every process a
 * test starts goes through here, so `killAllProcesses()` can end it.
 */
export function spawnProcess(
  name: string,
  command: string,
  args: readonly string[],
  options: SpawnOptions = {},
): TestProcess {
  const child = spawn(command, args, {
    cwd: options.cwd ?? repoRoot,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...options.env },
    stdio: options.ipc ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error(`could not spawn ${name} (${command})`);
  const pid = child.pid;
  let out = "";
  let err = "";
  let both = "";
  let exited = false;
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const waiter of waiters) waiter();
  };
  child.stdout?.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    out += text;
    both += text;
    notify();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    err += text;
    both += text;
    notify();
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on(options.settleOn ?? "exit", (code: number | null, signal: NodeJS.Signals | null) => {
      exited = true;
      notify();
      resolve({ code, signal });
    });
  });
  // The pid itself, not `exited`: with settleOn "close" the pid is gone before the pipes close.
  const alive = () => child.exitCode === null && child.signalCode === null;
  const handle: TestProcess = {
    name,
    child,
    pid,
    stdout: () => out,
    stderr: () => err,
    output: () => both,
    exit,
    running: () => !exited,
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = (out + err).match(pattern);
          if (match) {
            done();
            resolve(match);
          } else if (exited) {
            done();
            reject(new Error(`${name} exited before printing ${pattern}; output:\n${tail(out + err)}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(
            new Error(`${name} did not print ${pattern} within ${timeoutMs} ms; output:\n${tail(out + err)}`),
          );
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    signal(signal) {
      if (alive()) process.kill(pid, signal);
    },
    async kill() {
      if (alive()) process.kill(pid, "SIGKILL");
      await exit;
    },
  };
  started.add(handle);
  void exit.then(() => started.delete(handle));
  return handle;
}

/** SIGKILLs every process this module started that still runs (a stopped one too), and waits for them. */
export async function killAllProcesses(): Promise<void> {
  const running = [...started];
  for (const p of running) p.signal("SIGKILL");
  await Promise.all(running.map((p) => p.exit));
}

/** A TCP port on 127.0.0.1 that nothing listened on a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address !== null ? resolve(address.port) : reject(),
      );
    });
  });
}

/** Thrown by a `waitUntil` probe to stop waiting at once: the awaited state can no longer come. */
export class WaitAborted extends Error {
  override readonly name = "WaitAborted";
}

/**
 * Polls `probe` until it returns a value other than undefined/false, and returns it; throws after
 * `timeoutMs` with `what` and the last value seen, so a failure says which state never came.
 */
export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const intervalMs = options.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = value;
    } catch (error) {
      if (error instanceof WaitAborted) throw new Error(`stopped waiting for ${what}: ${error.message}`);
      last = error;
    }
    if (Date.now() >= deadline) {
      const seen = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${seen})`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

function tail(text: string, lines = 40): string {
  return text.split("\n").slice(-lines).join("\n");
}

/** True once the process is in the stopped state (`T` in /proc/<pid>/stat): SIGSTOP has landed. */
export function isStopped(process: TestProcess): boolean {
  const stat = readFileSync(`/proc/${process.pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).startsWith("T");
}
