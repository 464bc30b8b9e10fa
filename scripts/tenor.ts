/**
 * `npm run tenor -- <command>`: the operator CLI. Commands: `keys create|list|revoke` (API keys).
 * Reads DATABASE_URL here, at the entry point, and passes it in.
 */
import process from "node:process";
import { KEYS_USAGE, runKeysCommand, UsageError } from "../src/api/auth/keys-command.js";
import { toTenorError } from "../src/errors/tenor-error.js";
import { createPgPool } from "../src/store/pg-pool.js";

async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  if (command !== "keys") {
    process.stderr.write(
      `tenor: ${command ? `unknown command ${JSON.stringify(command)}` : "name a command"}\n${KEYS_USAGE}`,
    );
    return 2;
  }
  const url = process.env.DATABASE_URL;
  if (!url) {
    process.stderr.write("tenor: DATABASE_URL is required (the PostgreSQL the api role uses)\n");
    return 2;
  }
  const pool = createPgPool(url, { applicationName: "tenor-cli", max: 2 });
  try {
    return await runKeysCommand(rest, pool, {
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => process.stderr.write(text),
    });
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      process.stderr.write(`tenor: ${(error as Error).message}\n${KEYS_USAGE}`);
      return 2;
    }
    process.stderr.write(`tenor: ${toTenorError(error).message}\n`);
    return 1;
  } finally {
    await pool.end();
  }
}

process.exitCode = await main(process.argv.slice(2));
