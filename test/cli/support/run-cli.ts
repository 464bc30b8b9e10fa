import { entryCommand, tsxCommand } from "../../support/fast-entry.js";
import { spawnProcess } from "../../support/processes.js";

/** What one `tenor` process printed and how it exited. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `npm run tenor -- <args>` as the real process it is: scripts/tenor.ts started as
 * test/support/fast-entry.ts starts entries, or through tsx when an argument names a TypeScript
 * module the command imports at run time (`tenor compat --against <module.ts>`).
 */
export async function runTenor(args: readonly string[], env: Record<string, string>): Promise<CliRun> {
  const importsTypeScript = args.some((arg) => arg.endsWith(".ts"));
  const command = (importsTypeScript ? tsxCommand : entryCommand)("scripts/tenor.ts", args);
  const proc = spawnProcess(`tenor ${args[0] ?? ""}`, ...command, { env });
  const { code } = await proc.exit;
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}
