import { TenorError } from "../../errors/tenor-error.js";

/**
 * Stable codes of the errors raised while preparing, migrating or checking Tenor's database.
 * Never reworded once shipped: operators and CI match on them.
 */
export const MigrationErrorCode = {
  /** DATABASE_URL (or the URL given) is missing or not a postgres:// URL. */
  databaseUrlInvalid: "DATABASE_URL_INVALID",
  /** The PostgreSQL server did not accept a connection. Retryable: start it and run again. */
  databaseUnreachable: "DATABASE_UNREACHABLE",
  /** The database named by the URL does not exist (`ensureDatabase` creates it). */
  databaseMissing: "DATABASE_MISSING",
  /** The schema engine failed outside a specific operation (start-up, connection). */
  schemaEngineFailed: "SCHEMA_ENGINE_FAILED",
  /** The schema engine refused or failed to apply a migration. */
  migrationFailed: "MIGRATION_FAILED",
  /** The migrations directory or a migration in it is malformed. */
  migrationsDirectoryInvalid: "MIGRATIONS_DIRECTORY_INVALID",
  /** A new migration was requested but the schema already matches the migrations. */
  migrationEmpty: "MIGRATION_EMPTY",
  /** The migration name given to `db:migration:new` is unusable. */
  migrationNameInvalid: "MIGRATION_NAME_INVALID",
  /** The migrations do not produce schema.prisma: a migration is missing or was edited. */
  schemaDrift: "SCHEMA_DRIFT",
} as const;

/** One of {@link MigrationErrorCode}'s values. */
export type MigrationErrorCode = (typeof MigrationErrorCode)[keyof typeof MigrationErrorCode];

declare module "../../errors/error-code-registry.js" {
  interface ErrorCodeRegistry {
    migrations: MigrationErrorCode;
  }
}

/** How to start PostgreSQL on a Tenor machine, quoted in {@link MigrationError.unreachable}. */
export const POSTGRES_START_HINT =
  "Start PostgreSQL with `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start` " +
  "or `docker compose up -d postgres`.";

/** Any failure of the database preparation code in src/store/migrations. */
export class MigrationError extends TenorError<MigrationErrorCode> {
  constructor(
    code: MigrationErrorCode,
    message: string,
    options: { retryable?: boolean; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(code, message, options);
  }

  /**
   * The server behind `redactedUrl` refused or timed out. The message names the URL (never its
   * password) and says how to start PostgreSQL.
   */
  static unreachable(redactedUrl: string, cause: unknown): MigrationError {
    const reason = (cause instanceof Error ? cause.message : String(cause)).replace(/\s+/g, " ").trim();
    return new MigrationError(
      MigrationErrorCode.databaseUnreachable,
      `Cannot connect to PostgreSQL at ${redactedUrl} (${reason}). ${POSTGRES_START_HINT}`,
      { retryable: true, details: { url: redactedUrl }, cause },
    );
  }

  /** The URL is missing or unusable; `source` names where it came from (e.g. "DATABASE_URL"). */
  static invalidUrl(source: string, problem: string): MigrationError {
    return new MigrationError(MigrationErrorCode.databaseUrlInvalid, `${source} ${problem}`, {
      details: { source },
    });
  }
}

/** Error codes of the pg driver and Node's sockets that mean "no server to talk to". */
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "57P03", // cannot_connect_now: the server is starting up or shutting down
]);

/** True when `error` (or its cause, or one of an AggregateError's errors) means the server is unreachable. */
export function isUnreachableError(error: unknown): boolean {
  for (let current = error, depth = 0; current !== undefined && depth < 5; depth++) {
    if (typeof current !== "object" || current === null) return false;
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && UNREACHABLE_CODES.has(code)) return true;
    if (current instanceof AggregateError && current.errors.some(isUnreachableError)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
