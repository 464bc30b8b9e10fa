import type { Writable } from "node:stream";
import { ROLES, type Role } from "../../src/config/role.js";
import { SupervisorError, SupervisorErrorCode } from "./supervisor-errors.js";

/** The roles the supervisor can start, in start order. There is deliberately no combined role. */
export const SUPERVISED_ROLES = ROLES;

/** One of {@link SUPERVISED_ROLES}. */
export type SupervisedRole = Role;

/** The program each role runs; the supervisor adds `DAPI_ROLE` to the environment per child. */
export interface RoleCommand {
  /** Executable, usually `process.execPath`. */
  readonly file: string;
  /** Arguments, e.g. `["--import", "tsx", "workers/main.ts"]`. */
  readonly args: readonly string[];
}

/** Wait until each role's `/readyz` answers 200, then call `onReady`. */
export interface ReadinessOptions {
  /** Health port per started role; `/readyz` is probed on `host` at this port. */
  readonly ports: Readonly<Record<SupervisedRole, number>>;
  /** Host to probe. Default `127.0.0.1` (not `localhost`, which may resolve to `::1` first). */
  readonly host?: string;
  /** Time allowed for all roles to become ready, in ms. Default 60 000. On expiry all roles stop. */
  readonly timeoutMs?: number;
  /** Pause between probe rounds, in ms. Default 250. */
  readonly intervalMs?: number;
  /** Called once, when every started role has answered 200. */
  readonly onReady?: (urls: ReadonlyMap<SupervisedRole, string>) => void;
}

/** Everything {@link startSupervisor} needs; nothing is read from the process environment. */
export interface SupervisorOptions {
  /** Roles to start. Default: all of {@link SUPERVISED_ROLES}. Unknown or repeated roles are refused. */
  readonly roles?: readonly string[];
  /** The program each role runs. */
  readonly command: RoleCommand;
  /** Environment every child inherits (plus its own `DAPI_ROLE`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Working directory of the children. Default: the supervisor's. */
  readonly cwd?: string;
  /** Receives the children's prefixed stdout. */
  readonly stdout: Writable;
  /** Receives the children's prefixed stderr and the supervisor's own messages. */
  readonly stderr: Writable;
  /** Emit ANSI colour. Default false; decide with `shouldUseColour`. */
  readonly colour?: boolean;
  /** Time a role gets between SIGTERM and SIGKILL, in ms. Default 10 000. */
  readonly graceMs?: number;
  /** When set, poll `/readyz` of every role after start. */
  readonly readiness?: ReadinessOptions;
}

/** {@link SupervisorOptions} with defaults applied and every value checked. */
export interface ResolvedSupervisorOptions {
  readonly roles: readonly SupervisedRole[];
  readonly command: RoleCommand;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string | undefined;
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly colour: boolean;
  readonly graceMs: number;
  readonly readiness:
    | {
        readonly urls: ReadonlyMap<SupervisedRole, string>;
        readonly timeoutMs: number;
        readonly intervalMs: number;
        readonly onReady: ((urls: ReadonlyMap<SupervisedRole, string>) => void) | undefined;
      }
    | undefined;
}

/** Default SIGTERM-to-SIGKILL grace period, in ms; matches a typical container stop timeout. */
export const DEFAULT_GRACE_MS = 10_000;
/** Default readiness timeout, in ms: generous because the first start runs tsx compilation. */
export const DEFAULT_READY_TIMEOUT_MS = 60_000;
const DEFAULT_READY_INTERVAL_MS = 250;

/**
 * Applies defaults and checks every option, so a typo fails before any process starts.
 *
 * @throws SupervisorError `SUPERVISOR_INVALID_OPTIONS` with a message that says what to change.
 */
export function resolveSupervisorOptions(options: SupervisorOptions): ResolvedSupervisorOptions {
  const roles = resolveRoles(options.roles ?? SUPERVISED_ROLES);
  const graceMs = positiveMs("graceMs", options.graceMs ?? DEFAULT_GRACE_MS);
  let readiness: ResolvedSupervisorOptions["readiness"];
  if (options.readiness !== undefined) {
    const { ports, host = "127.0.0.1" } = options.readiness;
    const urls = new Map<SupervisedRole, string>();
    for (const role of roles) {
      const port = ports[role];
      if (!Number.isInteger(port) || port < 1 || port > 65_535) {
        throw invalid(`readiness port of role ${role} must be an integer 1-65535, got ${String(port)}`);
      }
      urls.set(role, `http://${host}:${port}/readyz`);
    }
    readiness = {
      urls,
      timeoutMs: positiveMs("readiness.timeoutMs", options.readiness.timeoutMs ?? DEFAULT_READY_TIMEOUT_MS),
      intervalMs: positiveMs(
        "readiness.intervalMs",
        options.readiness.intervalMs ?? DEFAULT_READY_INTERVAL_MS,
      ),
      onReady: options.readiness.onReady,
    };
  }
  return {
    roles,
    command: options.command,
    env: options.env,
    cwd: options.cwd,
    stdout: options.stdout,
    stderr: options.stderr,
    colour: options.colour ?? false,
    graceMs,
    readiness,
  };
}

function resolveRoles(requested: readonly string[]): SupervisedRole[] {
  if (requested.length === 0) throw invalid(`no roles given; choose from ${SUPERVISED_ROLES.join(", ")}`);
  const roles: SupervisedRole[] = [];
  for (const name of requested) {
    const role = SUPERVISED_ROLES.find((known) => known === name);
    if (role === undefined) {
      throw invalid(`unknown role "${name}"; allowed roles are ${SUPERVISED_ROLES.join(", ")}`);
    }
    if (roles.includes(role)) throw invalid(`role ${role} is listed twice; each role runs once`);
    roles.push(role);
  }
  return roles;
}

function positiveMs(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw invalid(`${name} must be a positive number of milliseconds, got ${value}`);
  }
  return value;
}

function invalid(message: string): SupervisorError {
  return new SupervisorError(SupervisorErrorCode.invalidOptions, message);
}
