import pg from "pg";
import { sessionBackendPid } from "../store/pg-shard-ownership.js";

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
    "client_connection_check_interval=1000",
    "idle_session_timeout=0",
    "idle_in_transaction_session_timeout=0",
    "statement_timeout=0",
  ]
    .map((setting) => `-c ${setting}`)
    .join(" ");
}

/**
 * Opens the one session-stable connection that holds a replica's shard locks. Never a pooled
 * connection, and never through a transaction-mode pooler (PgBouncer), which would hand the
 * session, and its locks, to someone else.
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
    return { client, backendPid: await sessionBackendPid(client), destroy };
  } catch (error) {
    destroy();
    throw error;
  }
}
