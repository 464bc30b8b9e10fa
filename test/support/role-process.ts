import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";

/** A Tenor role (workers/main.ts) running as a real child process, with its output collected. */
export interface RoleProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): void;
}

export function spawnRole(env: Record<string, string>): RoleProcess {
  const child = spawn(process.execPath, ["--import", "tsx", "workers/main.ts"], {
    // Several apis run at once on a test machine: the api's health port is any free one unless named.
    env: { PATH: process.env.PATH ?? "", TENOR_API_HEALTH_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  const exited = once(child, "exit").then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  return {
    child,
    output: () => text,
    exited,
    kill: (signal = "SIGKILL") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
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
