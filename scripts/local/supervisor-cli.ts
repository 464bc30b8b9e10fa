import { parseArgs } from "node:util";
import type { TenorConfig } from "../../src/config/schema.js";
import { SupervisorError, SupervisorErrorCode } from "./supervisor-errors.js";
import {
  DEFAULT_GRACE_MS,
  DEFAULT_READY_TIMEOUT_MS,
  type RoleCommand,
  SUPERVISED_ROLES,
  type SupervisedRole,
} from "./supervisor-options.js";

/**
 * Command-line parsing for `npm run local`, kept apart from scripts/local.ts so it is pure and
 * unit-testable: argv and an environment object in, plain values out.
 */

/** What `npm run local -- <flags>` asked for. */
export interface LocalCommandLine {
  /** Roles to start, in order. Default all three. */
  readonly roles: readonly string[];
  /** Program each role runs. Default `workers/main.ts` (through tsx). */
  readonly entry: string;
  /** Poll each role's `/readyz` and report when all answer 200. */
  readonly waitReady: boolean;
  /** Readiness timeout in ms. Default {@link DEFAULT_READY_TIMEOUT_MS}. */
  readonly readyTimeoutMs: number;
  /** SIGTERM-to-SIGKILL grace period in ms. Default {@link DEFAULT_GRACE_MS}. */
  readonly graceMs: number;
  /** Print usage and exit. */
  readonly help: boolean;
}

/** Default program of every role, run from source. */
export const DEFAULT_ENTRY = "workers/main.ts";

/** Usage text for `--help` and for a usage error. */
export const LOCAL_USAGE = `Usage: npm run local -- [options]

Starts the api, runner and indexer roles as separate processes, each line prefixed with its role.
Ctrl-C stops all of them (SIGTERM, then SIGKILL after the grace period; Ctrl-C twice kills now).
If any role exits on its own, the others are stopped and the exit code is 1.

Options:
  --roles <list>          comma-separated roles to start (default: ${SUPERVISED_ROLES.join(",")})
  --wait-ready            poll each role's /readyz until 200 and say when all are ready
  --ready-timeout-ms <n>  give up waiting for readiness after n ms (default: ${DEFAULT_READY_TIMEOUT_MS})
  --grace-ms <n>          time between SIGTERM and SIGKILL, in ms (default: ${DEFAULT_GRACE_MS})
  --entry <path>          program each role runs (default: ${DEFAULT_ENTRY}; .ts runs through tsx,
                          use dist/workers/main.js for the built code)
  --help                  show this text

Health ports come from TENOR_API_PORT (3000), TENOR_RUNNER_HEALTH_PORT (3001) and
TENOR_INDEXER_HEALTH_PORT (3002); NO_COLOR turns colour off.
`;

/**
 * Parses the supervisor's command line.
 *
 * @throws SupervisorError `SUPERVISOR_INVALID_OPTIONS` for unknown flags or malformed numbers.
 */
export function parseLocalCommandLine(argv: readonly string[]): LocalCommandLine {
  let values: ReturnType<typeof parse>["values"];
  try {
    values = parse(argv).values;
  } catch (error) {
    throw new SupervisorError(SupervisorErrorCode.invalidOptions, (error as Error).message);
  }
  return {
    roles: values.roles === undefined ? [...SUPERVISED_ROLES] : splitList(values.roles),
    entry: values.entry ?? DEFAULT_ENTRY,
    waitReady: values["wait-ready"] ?? false,
    readyTimeoutMs: milliseconds("--ready-timeout-ms", values["ready-timeout-ms"], DEFAULT_READY_TIMEOUT_MS),
    graceMs: milliseconds("--grace-ms", values["grace-ms"], DEFAULT_GRACE_MS),
    help: values.help ?? false,
  };
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      roles: { type: "string" },
      entry: { type: "string" },
      "wait-ready": { type: "boolean" },
      "ready-timeout-ms": { type: "string" },
      "grace-ms": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}

/** Each role's health port, from the same validated configuration the roles themselves load. */
export function rolePortsFromConfig(config: {
  api: Pick<TenorConfig["api"], "port">;
  runner: TenorConfig["runner"];
  indexer: Pick<TenorConfig["indexer"], "healthPort">;
}): Record<SupervisedRole, number> {
  return { api: config.api.port, runner: config.runner.healthPort, indexer: config.indexer.healthPort };
}

/**
 * The command a role runs: TypeScript entries go through tsx, built JavaScript runs on plain node
 * (tsx would only add start-up time).
 */
export function roleCommandFor(nodePath: string, entry: string): RoleCommand {
  const typescript = /\.[cm]?ts$/.test(entry);
  return { file: nodePath, args: typescript ? ["--import", "tsx", entry] : [entry] };
}

function splitList(list: string): string[] {
  return list
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

function milliseconds(flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new SupervisorError(
      SupervisorErrorCode.invalidOptions,
      `${flag} must be a positive whole number of milliseconds, got "${raw}"`,
    );
  }
  return value;
}
