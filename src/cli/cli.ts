import type { Pool } from "pg";
import { ConfigError } from "../config/config-error.js";
import type { AnyWorkflow } from "../engine/workflow.js";
import { toTenorError } from "../errors/tenor-error.js";
import { ApiProblem, apiClientFromEnv } from "./api-client.js";
import { type CliEnv, type CommandIo, EXIT, UsageError } from "./cli-io.js";
import { COMMAND_USAGE, USAGE, usageOf } from "./usage.js";

export { USAGE } from "./usage.js";

export interface CliOptions {
  env: CliEnv;
  io: CommandIo;
  /** The workflows of this build, loaded only by the commands that need them (`doctor`, `replay`). */
  workflows: () => Promise<readonly AnyWorkflow[]>;
}

/**
 * Runs one `tenor` command line; returns its exit code (never throws). Each command's module is
 * loaded when it runs, so a quick `runs get` does not pay for the database, Redis or workflow code.
 */
export async function runCli(args: readonly string[], options: CliOptions): Promise<number> {
  const { io } = options;
  const [command, ...rest] = args;
  // `--help` anywhere after a command (`tenor keys create --help`): that command's usage, exit 0,
  // before the command loads or asks for its environment.
  if (command !== undefined && command in COMMAND_USAGE && (rest.includes("--help") || rest.includes("-h"))) {
    io.stdout(usageOf(command));
    return EXIT.OK;
  }
  try {
    return await dispatch(command, rest, options);
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      io.stderr(`tenor: ${(error as Error).message}\n\n${usageOf(command)}`);
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
    case "runs": {
      const { runRunsCommand } = await import("./runs-command.js");
      return runRunsCommand(rest, apiClientFromEnv(env), io);
    }
    case "schedules": {
      const { runSchedulesCommand } = await import("./schedules-command.js");
      return runSchedulesCommand(rest, apiClientFromEnv(env), io);
    }
    case "contracts": {
      const { runContractsCommand } = await import("./contracts-command.js");
      return runContractsCommand(rest, apiClientFromEnv(env), io);
    }
    case "assets": {
      const { runAssetsCommand } = await import("./assets-command.js");
      return runAssetsCommand(rest, apiClientFromEnv(env), io);
    }
    case "ops": {
      const { runOpsCommand } = await import("./ops-command.js");
      return runOpsCommand(rest, apiClientFromEnv(env), io);
    }
    case "runners": {
      const { runRunnersCommand } = await import("./runners-command.js");
      return runRunnersCommand(rest, apiClientFromEnv(env), io);
    }
    case "keys": {
      const { runKeysCommand } = await import("./keys-command.js");
      const { PgApiKeys } = await import("../store/pg-api-keys.js");
      const { PgAudit } = await import("../store/pg-audit.js");
      return withPool(env, (pool) =>
        runKeysCommand(rest, { keys: new PgApiKeys(pool), audit: new PgAudit(pool) }, io),
      );
    }
    case "compat": {
      const { runCompatCommand } = await import("./compat-command.js");
      return withPool(env, (pool) => runCompatCommand(rest, pool, io));
    }
    case "doctor": {
      const { runDoctor } = await import("./doctor-command.js");
      const { PgReplicaDirectory } = await import("../ownership/store/pg-replica-directory.js");
      return runDoctor(rest, {
        env,
        io,
        workflows: await options.workflows(),
        replicas: (pool, livenessWindowMs) => new PgReplicaDirectory(pool, livenessWindowMs),
      });
    }
    case "replay": {
      const { runReplayCommand } = await import("./replay-command.js");
      return runReplayCommand(rest, io, options.workflows);
    }
    case "verify": {
      const { runVerifyCommand } = await import("./verify-command.js");
      return runVerifyCommand(rest, io);
    }
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
  const { createPgPool } = await import("../store/pg-pool.js");
  const pool = createPgPool(url, { applicationName: "tenor-cli", max: 2 });
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}
