import type { ChildProcess } from "node:child_process";
import { spawnProcess } from "./processes.js";

/** A Tenor role (workers/main.ts) running as a real child process, with its output collected. */
export interface RoleProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): void;
}

/** Spawns workers/main.ts with `env` (DAPI_ROLE names the role). */
export function spawnRole(env: Record<string, string>): RoleProcess {
  const role = spawnProcess(
    `role ${env.DAPI_ROLE ?? "?"}`,
    process.execPath,
    ["--import", "tsx", "workers/main.ts"],
    {
      // Several apis run at once on a test machine: the api's health port is any free one unless named.
      env: { TENOR_API_HEALTH_PORT: "0", ...env },
    },
  );
  return {
    child: role.child,
    output: role.output,
    exited: role.exit,
    kill: (signal = "SIGKILL") => role.signal(signal),
  };
}

/** Polls `probe` until it returns true or `timeoutMs` passes; the failure names what it waited for. */
export async function eventually(
  what: string,
  probe: () => Promise<boolean> | boolean,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await probe()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
