import type { ChildProcess } from "node:child_process";
import { entryCommand, type FastEntry } from "./fast-entry.js";
import { spawnProcess, type TestProcess, WaitAborted, waitUntil } from "./processes.js";

/**
 * Spawns a runner fixture (a TypeScript entry under test/, run from the repository root, see
 * test/support/fast-entry.ts) with `env` and waits for the `{"ready":true` line it prints once its engine runs.
 */
export async function startFixtureRunner(
  name: string,
  fixture: FastEntry,
  env: Record<string, string>,
  readyTimeoutMs = 60_000,
): Promise<TestProcess> {
  const runner = spawnProcess(name, ...entryCommand(fixture), { env });
  await runner.waitFor(/\{"ready":true/, readyTimeoutMs);
  return runner;
}

/** A Tenor role (workers/main.ts) running as a real child process, with its output collected. */
export interface RoleProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): void;
}

/** Spawns workers/main.ts with `env` (DAPI_ROLE names the role). */
export function spawnRole(env: Record<string, string>): RoleProcess {
  const role = spawnProcess(`role ${env.DAPI_ROLE ?? "?"}`, ...entryCommand("workers/main.ts"), {
    // Several apis run at once on a test machine: the api's health port is any free one unless named.
    env: { TENOR_API_HEALTH_PORT: "0", ...env },
  });
  return {
    child: role.child,
    output: role.output,
    exited: role.exit,
    kill: (signal = "SIGKILL") => role.signal(signal),
  };
}

/**
 * Waits until `GET <healthUrl>/readyz` answers 2xx; stops at once, with the role's output, when
 * the role exits first.
 */
export async function roleReady(
  what: string,
  role: RoleProcess,
  healthUrl: string,
  timeoutMs = 90_000,
): Promise<void> {
  try {
    await waitUntil(
      what,
      async () => {
        if (role.child.exitCode !== null || role.child.signalCode !== null) {
          throw new WaitAborted(`it exited:\n${role.output()}`);
        }
        return (await fetch(`${healthUrl}/readyz`)).ok;
      },
      { timeoutMs },
    );
  } catch (error) {
    // A role still starting at the deadline says how far it got: its last lines name the phase.
    if (error instanceof Error && !error.message.includes("it exited"))
      error.message += `\nits last output:\n${role.output().split("\n").slice(-30).join("\n")}`;
    throw error;
  }
}

/** Polls `probe` until it returns true or `timeoutMs` passes; the failure names what it waited for. */
export async function eventually(
  what: string,
  probe: () => Promise<boolean> | boolean,
  timeoutMs = 20_000,
): Promise<void> {
  await waitUntil(what, probe, { timeoutMs });
}
