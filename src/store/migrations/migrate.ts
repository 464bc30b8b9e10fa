import { MigrationErrorCode } from "./migration-error.js";
import { migrationNames, readMigrationsList, readSchemaFile } from "./migrations-directory.js";
import { MIGRATIONS_PATH, SCHEMA_PATH } from "./paths.js";
import { NO_EXTERNAL_ENTITIES, withSchemaEngine } from "./schema-engine.js";

/** Options of {@link applyMigrations}. Defaults point at the repository's prisma/ folder. */
export interface ApplyMigrationsOptions {
  /** Absolute path of the migrations directory. Default: prisma/migrations. */
  migrationsDirectory?: string;
  /** Absolute path of the Prisma schema (selects the connector). Default: prisma/schema.prisma. */
  schemaPath?: string;
  /** Receives the schema engine's log lines. Default: discarded. */
  log?: (line: string) => void;
}

/** What {@link applyMigrations} did. */
export interface ApplyMigrationsResult {
  /** Migrations applied by this call, in order; empty when the database was up to date. */
  applied: string[];
  /** Every migration in the directory, in order. */
  known: string[];
}

/**
 * Applies the migrations not yet applied to `databaseUrl`, like `prisma migrate deploy`: the
 * engine records each in Prisma's `_prisma_migrations` table, so running it again applies nothing
 * and Prisma's own CLI agrees about the database's history. The database must exist (see
 * `ensureDatabase`). Concurrent callers are serialised by the engine's PostgreSQL advisory lock.
 *
 * @param databaseUrl - postgresql:// URL of the database to migrate.
 * @throws MigrationError `DATABASE_UNREACHABLE` (retryable) when the server refuses connections,
 *   `DATABASE_MISSING` when the database does not exist,
 *   `MIGRATION_FAILED` when a migration fails or an applied one was edited or failed earlier,
 *   `MIGRATIONS_DIRECTORY_INVALID` when the directory is malformed.
 */
export async function applyMigrations(
  databaseUrl: string,
  options: ApplyMigrationsOptions = {},
): Promise<ApplyMigrationsResult> {
  const migrationsList = await readMigrationsList(options.migrationsDirectory ?? MIGRATIONS_PATH);
  const schema = await readSchemaFile(options.schemaPath ?? SCHEMA_PATH);
  const engineOptions = {
    databaseUrl,
    schema,
    operation: "Applying migrations",
    failureCode: MigrationErrorCode.migrationFailed,
    ...(options.log ? { log: options.log } : {}),
  };
  return withSchemaEngine(engineOptions, async (engine) => {
    const output = await engine.applyMigrations({ migrationsList, filters: NO_EXTERNAL_ENTITIES });
    return { applied: output.appliedMigrationNames, known: migrationNames(migrationsList) };
  });
}
