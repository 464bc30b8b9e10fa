import type { Pool } from "pg";
import { KEYS_USAGE, runKeysCommand } from "../api/auth/keys-command.js";
import { ConfigError } from "../config/config-error.js";
import { loadConfig } from "../config/load-config.js";
import { WorkflowRegistry } from "../engine/registry.js";
import type { AnyWorkflow } from "../engine/workflow.js";
import { toTenorError } from "../errors/tenor-error.js";
import { createRedisConnection } from "../runtime/redis-connection.js";
import { migrationNames, readMigrationsList } from "../store/migrations/migrations-directory.js";
import { MIGRATIONS_PATH } from "../store/migrations/paths.js";
import { createPgPool } from "../store/pg-pool.js";
import { ApiProblem, apiClientFromEnv } from "./api-client.js";
import { type CliEnv, type CommandIo, EXIT, UsageError } from "./cli-io.js";
import { COMPAT_USAGE, runCompatCommand } from "./compat-command.js";
import { DOCTOR_USAGE, runDoctorCommand } from "./doctor-command.js";
import { RUNS_USAGE, runRunsCommand } from "./runs-command.js";
import { runSchedulesCommand, SCHEDULES_USAGE } from "./schedules-command.js";
import { runVerifyCommand, VERIFY_USAGE } from "./verify-command.js";

export const USAGE = `Usage: tenor <command> (npm run tenor -- <command>)

Through the Platform API (TENOR_API_URL, TENOR_API_KEY):
${RUNS_USAGE}${SCHEDULES_USAGE}
Directly on the database (DATABASE_URL; doctor also REDIS_URL and the role configuration):
${KEYS_USAGE.replace(/^Usage:\n/, "").replaceAll("npm run tenor --", "tenor")}${DOCTOR_USAGE}${COMPAT_USAGE}
Offline:
${VERIFY_USAGE}
Human tables by default; --json prints what scripts need. Exit codes: 0 done, 1 failed or refused, 2 usage.
`;

export interface CliOptions {
  env: CliEnv;
  io: CommandIo;
  /** The workflows of this build: `doctor` checks unfinished executions' versions against them. */
  workflows: readonly AnyWorkflow[];
}

/** Runs one `tenor` command line; returns its exit code (never throws). */
export async function runCli(args: readonly string[], options: CliOptions): Promise<number> {
  const { io } = options;
  const [command, ...rest] = args;
  try {
    return await dispatch(command, rest, options);
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      io.stderr(`tenor: ${(error as Error).message}\n\n${USAGE}`);
      return EXIT.USAGE;
    }
    if (error instanceof ConfigError) {
      io.stderr(`tenor: ${error.message}\n`);
      return EXIT.USAGE;
    }
    if (error instanceof ApiProblem) {
      io.stderr(`tenor: the API refused: ${error.message}\n`);
      return EXIT.FAILED;
    }
    const failure = toTenorError(error);
    io.stderr(`tenor: ${failure.code}: ${failure.message}\n`);
    return EXIT.FAILED;
  }
}

async function dispatch(command: string | undefined, rest: string[], options: CliOptions): Promise<number> {
  const { env, io } = options;
  switch (command) {
    case "runs":
      return runRunsCommand(rest, apiClientFromEnv(env), io);
    case "schedules":
      return runSchedulesCommand(rest, apiClientFromEnv(env), io);
    case "keys":
      return withPool(env, (pool) => runKeysCommand(rest, pool, io));
    case "compat":
      return withPool(env, (pool) => runCompatCommand(rest, pool, io));
    case "doctor":
      return doctor(rest, options);
    case "verify":
      return runVerifyCommand(rest, io);
    case "help":
    case "--help":
    case "-h":
      io.stdout(USAGE);
      return EXIT.OK;
    default:
      throw new UsageError(command ? `unknown command ${JSON.stringify(command)}` : "name a command");
  }
}

async function withPool(env: CliEnv, work: (pool: Pool) => Promise<number>): Promise<number> {
  const url = env.DATABASE_URL;
  if (!url) throw new UsageError("DATABASE_URL is required (the PostgreSQL the roles use)");
  const pool = createPgPool(url, { applicationName: "tenor-cli", max: 2 });
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

async function doctor(args: string[], options: CliOptions): Promise<number> {
  const config = loadConfig({ env: options.env });
  const redis = createRedisConnection(config.redisUrl, "producer");
  redis.on("error", () => undefined);
  const pool = createPgPool(config.databaseUrl, { applicationName: "tenor-doctor", max: 2 });
  try {
    const migrations = migrationNames(await readMigrationsList(MIGRATIONS_PATH));
    return await runDoctorCommand(
      args,
      { config, pool, redis, registry: new WorkflowRegistry(options.workflows), migrations },
      options.io,
    );
  } finally {
    redis.disconnect();
    await pool.end();
  }
}
