import pg from "pg";
import { UnnamedStatementClient } from "./unnamed-statement-client.js";

export interface PgPoolOptions {
  /** Most connections this process opens; priced against PostgreSQL's max_connections per role. */
  max?: number;
  /** Shown in pg_stat_activity, so an operator can tell the roles' connections apart. */
  applicationName: string;
  /**
   * Keep the named prepared statements of the hot path (default true). False sends every statement
   * unnamed, for a transaction-mode pooler that does not track them (src/store/unnamed-statement-client.ts).
   */
  namedStatements?: boolean;
}

/**
 * The `pg` pool for the journal's hot path and the read model. TCP keepalives let a dead peer be
 * noticed in seconds instead of the kernel's two hours.
 */
export function createPgPool(connectionString: string, options: PgPoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 20,
    application_name: options.applicationName,
    keepAlive: true,
    keepAliveInitialDelayMillis: 5_000,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    ...(options.namedStatements === false ? { Client: UnnamedStatementClient } : {}),
  });
  // A connection that dies while idle (server restart, pg_terminate_backend) emits here; the pool
  // drops it and the next query opens a fresh one. Without a listener the process would crash.
  pool.on("error", () => undefined);
  return pool;
}

/** One round trip to PostgreSQL: how startup and readiness learn that the pool can reach it. */
export async function pingDatabase(pool: pg.Pool): Promise<void> {
  await pool.query("SELECT 1");
}

/**
 * Whether `pool` can hand out a connection without making anyone wait: an idle one, or room to
 * open one. A scrape-time read checks it first, so `/metrics` never queues for a connection a
 * request needs (nor counts as a waiter in the api's pool-wait estimate).
 */
export function hasFreeConnection(pool: pg.Pool): boolean {
  return pool.idleCount > 0 || pool.totalCount < (pool.options.max ?? 10);
}
