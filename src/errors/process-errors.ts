/** Stable error codes of a role process's own start; never reworded once shipped. */
export const PROCESS_ERRORS = {
  /**
   * The role's port (API or health) cannot be bound: another process holds it, or the user may not
   * bind it. Not retryable: waiting does not free a port another service owns, and a role that
   * cannot be probed must not take work.
   */
  PORT_UNAVAILABLE: "PORT_UNAVAILABLE",
  /** PostgreSQL or Redis could not be reached at start (retried within the relaunch budget). */
  DEPENDENCY_UNREACHABLE: "DEPENDENCY_UNREACHABLE",
} as const;

export type ProcessErrorCode = (typeof PROCESS_ERRORS)[keyof typeof PROCESS_ERRORS];

declare module "./error-code-registry.js" {
  interface ErrorCodeRegistry {
    process: ProcessErrorCode;
  }
}
