import { MigrationError } from "./migration-error.js";

/** The database every PostgreSQL server has, used to create and drop other databases. */
export const MAINTENANCE_DATABASE = "postgres";

/** Longest database name PostgreSQL keeps (NAMEDATALEN - 1, in bytes). */
const MAX_DATABASE_NAME_BYTES = 63;

/**
 * Parses and checks a PostgreSQL connection URL.
 *
 * @param url - `postgresql://` or `postgres://` URL naming a database.
 * @param source - what to call the URL in error messages, e.g. `"DATABASE_URL"`.
 * @throws MigrationError `DATABASE_URL_INVALID` when the URL is missing, malformed, not PostgreSQL
 *   or names no database.
 */
export function parseDatabaseUrl(url: string | undefined, source = "the database URL"): URL {
  if (url === undefined || url.trim() === "") {
    throw MigrationError.invalidUrl(source, "is not set: set it to a postgresql:// URL naming the database.");
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw MigrationError.invalidUrl(source, "is not a valid URL (expected postgresql://user@host:port/db).");
  }
  if (parsed.protocol !== "postgresql:" && parsed.protocol !== "postgres:") {
    throw MigrationError.invalidUrl(source, `must use postgresql://, not ${parsed.protocol}//.`);
  }
  databaseName(parsed, source);
  return parsed;
}

/**
 * The database named by a URL's path, decoded.
 * @throws MigrationError `DATABASE_URL_INVALID` when the path names no database or a too long one.
 */
export function databaseName(url: URL, source = "the database URL"): string {
  const name = decodeURIComponent(url.pathname.replace(/^\//, ""));
  if (name === "" || name.includes("/")) {
    throw MigrationError.invalidUrl(
      source,
      "must name a database, e.g. postgresql://postgres@127.0.0.1:5432/tenor.",
    );
  }
  if (Buffer.byteLength(name) > MAX_DATABASE_NAME_BYTES) {
    throw MigrationError.invalidUrl(source, `names a database longer than ${MAX_DATABASE_NAME_BYTES} bytes.`);
  }
  return name;
}

/** The same server and credentials as `url`, connected to database `name` instead. */
export function withDatabase(url: string | URL, name: string): string {
  const copy = new URL(url.toString());
  copy.pathname = `/${encodeURIComponent(name)}`;
  return copy.toString();
}

/** The URL with its password replaced by `***`, safe for logs and error messages. */
export function redactDatabaseUrl(url: string | URL): string {
  let copy: URL;
  try {
    copy = new URL(url.toString());
  } catch {
    return "<unparseable database URL>";
  }
  if (copy.password !== "") copy.password = "***";
  return copy.toString();
}

/** `name` quoted as a PostgreSQL identifier (for CREATE/DROP DATABASE, which take no parameters). */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
