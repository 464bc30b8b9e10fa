import { TenorError } from "../../src/errors/tenor-error.js";

/** Stable codes for everything the local supervisor reports as a failure. */
export const SupervisorErrorCode = {
  /** Options were invalid (unknown role, duplicate role, bad number); fix the command line. */
  invalidOptions: "SUPERVISOR_INVALID_OPTIONS",
  /** A role process exited while the supervisor had not asked it to. */
  childExited: "SUPERVISOR_CHILD_EXITED",
  /** A role process could not be started at all (for example the executable is missing). */
  spawnFailed: "SUPERVISOR_SPAWN_FAILED",
  /** Some role did not answer `/readyz` with 200 within the readiness timeout. */
  readyTimeout: "SUPERVISOR_READY_TIMEOUT",
  /** A role ignored SIGTERM for the whole grace period and was killed with SIGKILL. */
  killedAfterGrace: "SUPERVISOR_KILLED_AFTER_GRACE",
  /** A role exited with a failure code while shutting down on request. */
  shutdownFailed: "SUPERVISOR_SHUTDOWN_FAILED",
} as const;

/** One of {@link SupervisorErrorCode}'s values. */
export type SupervisorErrorCodeValue = (typeof SupervisorErrorCode)[keyof typeof SupervisorErrorCode];

/**
 * A failure of the local supervisor or of a role it runs. None is retryable: each means the
 * local stack is not running as asked and a person has to look at the role's output.
 */
export class SupervisorError extends TenorError<SupervisorErrorCodeValue> {
  constructor(code: SupervisorErrorCodeValue, message: string, details: Record<string, unknown> = {}) {
    super(code, message, { retryable: false, details });
  }

  /** A role exited without being asked to; names the role and how it ended. */
  static childExited(role: string, code: number | null, signal: string | null): SupervisorError {
    return new SupervisorError(
      SupervisorErrorCode.childExited,
      `role ${role} exited unexpectedly (${describeExit(code, signal)})`,
      { role, exitCode: code, signal },
    );
  }

  /** Some roles never became ready; names each with the last thing its `/readyz` said. */
  static readyTimeout(timeoutMs: number, pending: ReadonlyMap<string, string>): SupervisorError {
    const roles = [...pending].map(([role, last]) => `${role} (last: ${last})`).join(", ");
    return new SupervisorError(
      SupervisorErrorCode.readyTimeout,
      `not ready after ${timeoutMs} ms: ${roles}`,
      { timeoutMs, roles: [...pending.keys()] },
    );
  }
}

/** Describes how a process ended, for messages: `exit code 3` or `signal SIGKILL`. */
export function describeExit(code: number | null, signal: string | null): string {
  if (signal !== null) return `signal ${signal}`;
  return `exit code ${code ?? "unknown"}`;
}
