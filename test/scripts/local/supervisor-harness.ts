import type { ChildProcess } from "node:child_process";
import { freePort, spawnProcess } from "../../support/processes.js";

/**
 * Runs `scripts/local.ts` (the real CLI) as a process against test/fixtures/fake-role.mjs, and
 * lets a test wait for a line or for the exit instead of sleeping.
 */

const fakeRole = "test/fixtures/fake-role.mjs";

/** A running supervisor process and everything it has printed so far. */
export interface LocalRun {
  readonly process: ChildProcess;
  /** Everything written to stdout so far. */
  stdout(): string;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Resolves with the first match of `pattern` in stdout + stderr; rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves when the supervisor has exited. */
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Three free TCP ports for the roles' health servers, as the env variables the roles read, plus
 * the connection URLs the supervisor's configuration check requires (the fake role never uses them).
 */
export async function freeRolePorts(): Promise<Record<string, string>> {
  const [api, runner, indexer] = await Promise.all([freePort(), freePort(), freePort()]);
  return {
    DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/unused",
    REDIS_URL: "redis://127.0.0.1:6379",
    TENOR_API_PORT: String(api),
    TENOR_RUNNER_HEALTH_PORT: String(runner),
    TENOR_INDEXER_HEALTH_PORT: String(indexer),
    // The supervisor's own behaviour is under test here; test/roles/dev-chain.int.test.ts covers the demo chain.
    TENOR_DEV_CHAIN: "off",
  };
}

/** Starts the supervisor CLI with the fake role as every role's entry. */
export function runLocal(args: readonly string[], env: Record<string, string>): LocalRun {
  const run = spawnProcess(
    "scripts/local.ts",
    process.execPath,
    ["--import", "tsx", "scripts/local.ts", "--entry", fakeRole, ...args],
    // NO_COLOR and FORCE_COLOR unset: the pipes are not TTYs, so output must be plain anyway.
    // Settled on "close": tests assert on the supervisor's last lines.
    { env, settleOn: "close" },
  );
  return {
    process: run.child,
    stdout: run.stdout,
    stderr: run.stderr,
    waitFor: (pattern, timeoutMs = 20_000) => run.waitFor(pattern, timeoutMs),
    exit: run.exit,
  };
}

/** The pids the supervisor reported starting, by role. */
export function startedPids(stderr: string): Map<string, number> {
  const pids = new Map<string, number>();
  for (const match of stderr.matchAll(/started (\w+) \(pid (\d+)\)/g)) pids.set(match[1]!, Number(match[2]));
  return pids;
}

/** Whether a process with this pid still exists (a zombie counts as existing). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
