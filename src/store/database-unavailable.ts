/**
 * Why a statement never reached PostgreSQL because no connection could be had:
 * - `pool_timeout`: every connection of this process's pool stayed busy for the pool's connection
 *   timeout (pg-pool's "timeout exceeded when trying to connect");
 * - `too_many_connections`: the server refused a new connection at its limit (SQLSTATE 53300:
 *   `max_connections`, or a role's or database's `CONNECTION LIMIT`);
 * - `unreachable`: no server took the connection (refused, unresolvable, unroutable, no handshake
 *   within the connection timeout, or starting up or shutting down: SQLSTATE 57P03).
 *
 * In every case the statement was not sent, so nothing it would have written exists and the same
 * request may be tried again unchanged.
 */
export type DatabaseUnavailableReason = "pool_timeout" | "too_many_connections" | "unreachable";

/** pg-pool's message when no pooled connection came free in time; it carries no code. */
const POOL_TIMEOUT_MESSAGE = "timeout exceeded when trying to connect";
/** pg-pool's message when a new connection's handshake did not finish in time. */
const CONNECT_TIMEOUT_MESSAGE = "Connection terminated due to connection timeout";
const TOO_MANY_CONNECTIONS = "53300";
const CANNOT_CONNECT_NOW = "57P03";
/** Node's system calls that open a connection: an error of theirs means none was opened. */
const CONNECT_SYSCALLS = new Set(["connect", "getaddrinfo"]);
/** Prisma's driver-adapter kinds for the same causes (@prisma/adapter-pg maps pg's errors to them). */
const PRISMA_KINDS: Readonly<Record<string, DatabaseUnavailableReason>> = {
  TooManyConnections: "too_many_connections",
  DatabaseNotReachable: "unreachable",
};

/**
 * The reason `error` means "no database connection could be had", or null for any other error
 * (a failed statement, a lost connection mid-statement: whether that statement ran is unknown).
 * Looks through `cause` chains and Prisma's wrapping of the pg error.
 */
export function databaseUnavailableReason(error: unknown): DatabaseUnavailableReason | null {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const reason = ownReason(current as ErrorShape);
    if (reason !== null) return reason;
    // A host with several addresses (`localhost`: ::1 and 127.0.0.1) fails with one error per
    // address attempted, gathered in an AggregateError that carries no syscall of its own.
    if (current instanceof AggregateError) return aggregateReason(current.errors);
    current = (current as ErrorShape).cause;
  }
  return null;
}

/** The reason shared by every attempt of an AggregateError, or null when one attempt was something else. */
function aggregateReason(errors: readonly unknown[]): DatabaseUnavailableReason | null {
  const reasons = errors.map(databaseUnavailableReason);
  const first = reasons[0] ?? null;
  return reasons.every((reason) => reason === first) ? first : null;
}

interface ErrorShape {
  message?: unknown;
  code?: unknown;
  syscall?: unknown;
  cause?: unknown;
  meta?: { driverAdapterError?: { cause?: { kind?: unknown } } };
}

function ownReason(error: ErrorShape): DatabaseUnavailableReason | null {
  if (error.message === POOL_TIMEOUT_MESSAGE) return "pool_timeout";
  if (error.message === CONNECT_TIMEOUT_MESSAGE) return "unreachable";
  if (error.code === TOO_MANY_CONNECTIONS) return "too_many_connections";
  if (error.code === CANNOT_CONNECT_NOW) return "unreachable";
  if (typeof error.syscall === "string" && CONNECT_SYSCALLS.has(error.syscall)) return "unreachable";
  const kind = error.meta?.driverAdapterError?.cause?.kind;
  return typeof kind === "string" ? (PRISMA_KINDS[kind] ?? null) : null;
}
