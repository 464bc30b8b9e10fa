/** Where a command writes: its result to stdout, everything else to stderr. */
export interface CommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** A mistake on the command line: exit code 2 with the usage. */
export class UsageError extends Error {}

/** Exit codes of every `tenor` command (docs/console.md, "CLI"). */
export const EXIT = {
  /** Done; for checks (doctor, compat, verify): everything passed. */
  OK: 0,
  /** The command ran and found a problem, or the API refused the request. */
  FAILED: 1,
  /** The command line or the environment is wrong (unknown command, missing argument or variable). */
  USAGE: 2,
} as const;

/** The environment a command may read: the entry point passes `process.env` in. */
export type CliEnv = Readonly<Record<string, string | undefined>>;

/** Prints a command's answer: its JSON with `--json`, otherwise the table or fields `human` renders. */
export function answerPrinter(io: CommandIo, json: boolean | undefined) {
  return (body: unknown, human: () => string): void =>
    io.stdout(json ? `${JSON.stringify(body, null, 2)}\n` : human());
}
