import pg from "pg";
import {
  databaseName,
  MAINTENANCE_DATABASE,
  parseDatabaseUrl,
  quoteIdentifier,
  redactDatabaseUrl,
  withDatabase,
} from "./database-url.js";
import { isUnreachableError, MigrationError } from "./migration-error.js";

/** PostgreSQL error codes meaning "that database already exists" (the second: a concurrent CREATE won). */
const DATABASE_EXISTS_CODES = new Set(["42P04", "23505"]);

/** What {@link ensureDatabase} did. */
export interface EnsureDatabaseResult {
  /** The database's name. */
  database: string;
  /** True when this call created it; false when it already existed. */
  created: boolean;
}

/**
 * Creates the database named by `databaseUrl` when it does not exist, connecting to the server's
 * `postgres` maintenance database with the same credentials. Safe to run concurrently: a
 * creation that loses the race counts as "already existed".
 *
 * @param databaseUrl - postgresql:// URL of the database to ensure.
 * @throws MigrationError `DATABASE_URL_INVALID` for a bad URL, `DATABASE_UNREACHABLE` (retryable)
 *   when the server refuses connections; other PostgreSQL errors (e.g. no CREATEDB privilege) pass through.
 */
export async function ensureDatabase(databaseUrl: string): Promise<EnsureDatabaseResult> {
  const url = parseDatabaseUrl(databaseUrl);
  const database = databaseName(url);
  return withMaintenanceClient(databaseUrl, async (client) => {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (found.rowCount !== 0) return { database, created: false };
    try {
      await client.query(`CREATE DATABASE ${quoteIdentifier(database)}`);
      return { database, created: true };
    } catch (error) {
      if (DATABASE_EXISTS_CODES.has((error as { code?: string }).code ?? ""))
        return { database, created: false };
      throw error;
    }
  });
}

/**
 * Drops the database named by `databaseUrl` if it exists, disconnecting its sessions
 * (`WITH (FORCE)`, PostgreSQL 13+). For tests and throwaway databases only.
 *
 * @returns true when a database was dropped.
 */
export async function dropDatabase(databaseUrl: string): Promise<boolean> {
  const database = databaseName(parseDatabaseUrl(databaseUrl));
  return withMaintenanceClient(databaseUrl, async (client) => {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    await client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(database)} WITH (FORCE)`);
    return found.rowCount !== 0;
  });
}

/**
 * Runs `use` with a client connected to the maintenance database of `databaseUrl`'s server.
 *
 * @throws MigrationError `DATABASE_UNREACHABLE` (retryable) when the server refuses connections.
 */
export async function withMaintenanceClient<T>(
  databaseUrl: string,
  use: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: withDatabase(databaseUrl, MAINTENANCE_DATABASE) });
  // An error emitted by an idle client (server restart) must not crash the process; the next query fails.
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (error) {
    if (isUnreachableError(error)) throw MigrationError.unreachable(redactDatabaseUrl(databaseUrl), error);
    throw error;
  }
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}
