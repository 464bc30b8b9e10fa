import { spawnProcess } from "../../support/processes.js";

/** What one `tenor` process printed and how it exited. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `npm run tenor -- <args>` as the real process it is (node + tsx on scripts/tenor.ts). */
export async function runTenor(args: readonly string[], env: Record<string, string>): Promise<CliRun> {
  const proc = spawnProcess(
    `tenor ${args[0] ?? ""}`,
    process.execPath,
    ["--import", "tsx", "scripts/tenor.ts", ...args],
    {
      env,
    },
  );
  const { code } = await proc.exit;
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}
