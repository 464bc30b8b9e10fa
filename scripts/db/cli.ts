import { MigrationError, MigrationErrorCode, parseDatabaseUrl } from "../../src/store/migrations/index.js";

/** Exit code of a CLI that found a problem it was asked to look for (drift, empty migration). */
export const EXIT_FINDING = 1;

/** Exit code of a CLI that could not do its job (bad input, unreachable server, engine failure). */
export const EXIT_FAILURE = 2;

/**
 * DATABASE_URL from the environment, checked. These CLIs are entry points, so they (not
 * src/store) read the environment; there is deliberately no default database.
 *
 * @throws MigrationError `DATABASE_URL_INVALID` naming DATABASE_URL when it is unset or malformed.
 */
export function databaseUrlFromEnv(): string {
  const url = process.env.DATABASE_URL;
  parseDatabaseUrl(url, "DATABASE_URL");
  return url as string;
}

/**
 * Runs a CLI's body and turns its outcome into an exit code: the body's number, or
 * {@link EXIT_FAILURE} with `tenor <code>: <message>` on stderr for any error (a stack trace only
 * for errors Tenor did not raise on purpose).
 */
export async function runCli(name: string, body: () => Promise<number>): Promise<never> {
  let code: number;
  try {
    code = await body();
  } catch (error) {
    code =
      error instanceof MigrationError && error.code === MigrationErrorCode.migrationEmpty
        ? EXIT_FINDING
        : EXIT_FAILURE;
    if (error instanceof MigrationError) {
      process.stderr.write(`${name}: ${error.code}: ${error.message}\n`);
    } else {
      process.stderr.write(
        `${name}: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
    }
  }
  // Exit explicitly: the engine's pools are closed, but nothing else should keep the CLI alive.
  process.exit(code);
}
