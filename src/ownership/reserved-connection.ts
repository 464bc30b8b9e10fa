import pg from "pg";
import { OWNERSHIP_ERRORS } from "../errors/ownership-errors.js";
import { redactText } from "../errors/redact.js";
import { TenorError } from "../errors/tenor-error.js";
import { sessionBackendPid, sessionConnectionCheckIntervalMs } from "./store/pg-shard-ownership.js";

export interface ReservedConnectionOptions {
  connectionString: string;
  /** Shown in pg_stat_activity. */
  applicationName: string;
  /**
   * How long the server keeps a silent client's session (and so its advisory locks), in
   * milliseconds. Set to the liveness window: a partitioned owner loses its shards within it.
   */
  deadPeerMs: number;
  /** Connect deadline, in milliseconds. */
  connectTimeoutMs: number;
}

/** A connected reserved session and the backend that serves it. */
export interface ReservedConnection {
  client: pg.Client;
  /** `pg_backend_pid()` of the session: terminated from another connection after an overrun. */
  backendPid: number;
  /** Tears the socket down at once, without waiting for the server (a blocked query included). */
  destroy(): void;
}

/** `client_connection_check_interval` the startup options ask for; read back to prove they arrived. */
const CONNECTION_CHECK_INTERVAL_MS = 1_000;

/**
 * Session settings of the reserved connection, passed as startup options so they hold from the
 * first query (PostgreSQL ≥ 14):
 *
 * - `tcp_user_timeout`, `tcp_keepalives_*`: the *server* drops a client that vanished without a
 *   FIN (partition, frozen VM) within `deadPeerMs`, which ends the session and frees its locks;
 *   the kernel default is about two hours.
 * - `client_connection_check_interval`: a backend blocked in a lock wait notices that its client
 *   hung up within a second, instead of holding its advisory locks until the wait ends.
 * - `idle_session_timeout=0`, `idle_in_transaction_session_timeout=0`, `statement_timeout=0`: no
 *   server-side timer may end the session that holds the locks; deadlines are enforced by the
 *   owner, which then rebuilds the session itself.
 */
export function reservedSessionOptions(deadPeerMs: number): string {
  const idleSeconds = Math.max(1, Math.floor(deadPeerMs / 3_000));
  return [
    `tcp_user_timeout=${Math.max(1_000, Math.floor(deadPeerMs))}`,
    `tcp_keepalives_idle=${idleSeconds}`,
    "tcp_keepalives_interval=1",
    "tcp_keepalives_count=3",
    `client_connection_check_interval=${CONNECTION_CHECK_INTERVAL_MS}`,
    "idle_session_timeout=0",
    "idle_in_transaction_session_timeout=0",
    "statement_timeout=0",
  ]
    .map((setting) => `-c ${setting}`)
    .join(" ");
}

/** PgBouncer's answer to a startup parameter it does not forward (08P01, before any query). */
const POOLER_REFUSED_OPTIONS = /unsupported startup parameter/i;

/**
 * Opens the one session-stable connection that holds a replica's shard locks. Never a pooled
 * connection, and never through a transaction-mode pooler (PgBouncer), which would hand the
 * session, and its locks, to someone else. Such a pooler is recognised by what it does to the
 * startup options: PgBouncer refuses `options` ("unsupported startup parameter"), or drops it when
 * told to ignore it, and then the settings asked for are not in force.
 *
 * @throws TenorError RESERVED_SESSION_POOLED (not retryable) when either happens.
 */
export async function openReservedConnection(
  options: ReservedConnectionOptions,
): Promise<ReservedConnection> {
  const client = new pg.Client({
    connectionString: options.connectionString,
    application_name: options.applicationName,
    options: reservedSessionOptions(options.deadPeerMs),
    keepAlive: true,
    keepAliveInitialDelayMillis: Math.max(1_000, Math.floor(options.deadPeerMs / 3)),
    connectionTimeoutMillis: options.connectTimeoutMs,
  });
  // A broken session is detected by the next refresh; without a listener the process would crash.
  client.on("error", () => undefined);
  const destroy = () => {
    const stream = (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection
      ?.stream;
    stream?.destroy();
    void client.end().catch(() => undefined);
  };
  try {
    await client.connect();
    const checkIntervalMs = await sessionConnectionCheckIntervalMs(client);
    if (checkIntervalMs !== CONNECTION_CHECK_INTERVAL_MS)
      throw pooledSession(
        options.connectionString,
        `its startup options did not reach PostgreSQL (client_connection_check_interval is ${checkIntervalMs} ms, asked ${CONNECTION_CHECK_INTERVAL_MS})`,
      );
    return { client, backendPid: await sessionBackendPid(client), destroy };
  } catch (error) {
    destroy();
    if (error instanceof Error && POOLER_REFUSED_OPTIONS.test(error.message))
      throw pooledSession(
        options.connectionString,
        `a pooler refused its startup options (${error.message})`,
        error,
      );
    throw error;
  }
}

function pooledSession(connectionString: string, what: string, cause?: unknown): TenorError {
  return new TenorError(
    OWNERSHIP_ERRORS.RESERVED_SESSION_POOLED,
    `The reserved session at ${redactText(connectionString)} is not a PostgreSQL session of its own: ${what}. ` +
      "A connection pooler in transaction mode would share its session advisory locks (shard ownership, " +
      "runner liveness) with other clients. Point database.sessionUrl (TENOR_DATABASE_SESSION_URL) at " +
      "PostgreSQL directly; the pools may keep DATABASE_URL on PgBouncer.",
    { retryable: false, details: { setting: "database.sessionUrl" }, ...(cause ? { cause } : {}) },
  );
}

/**
 * Opens and closes one reserved session: a role that holds reserved sessions calls it at startup,
 * so a session URL that goes through a pooler refuses the role before it takes any work.
 *
 * @throws TenorError RESERVED_SESSION_POOLED as {@link openReservedConnection}.
 */
export async function checkReservedSession(
  connectionString: string,
  connectTimeoutMs: number,
): Promise<void> {
  const session = await openReservedConnection({
    connectionString,
    applicationName: "tenor-session-check",
    deadPeerMs: 10_000,
    connectTimeoutMs,
  });
  await session.client.end().catch(() => session.destroy());
}
