import type { DiffTarget } from "@prisma/schema-engine-wasm/schema_engine_bg";
import { MAINTENANCE_DATABASE, withDatabase } from "./database-url.js";
import { MigrationErrorCode } from "./migration-error.js";
import { POSTGRES_LOCKFILE, readMigrationsList, readSchemaFile } from "./migrations-directory.js";
import { MIGRATIONS_PATH, SCHEMA_PATH } from "./paths.js";
import { NO_EXTERNAL_ENTITIES, type SchemaFile, withSchemaEngine } from "./schema-engine.js";

/** Exit code the engine reports for a non-empty diff when asked for one (`--exit-code`). */
const DIFF_NOT_EMPTY = 2;

/** Options shared by the diffs. Defaults point at the repository's prisma/ folder. */
export interface DiffOptions {
  /**
   * postgresql:// URL of a server the engine may create throwaway shadow databases on (named
   * `tenor_shadow_*`, dropped afterwards). Its database is only read by {@link diffDatabaseToSchema};
   * {@link diffMigrationsToSchema} needs only the server.
   */
  databaseUrl: string;
  /** Absolute path of the migrations directory. Default: prisma/migrations. */
  migrationsDirectory?: string;
  /** Absolute path of the Prisma schema to compare with. Default: prisma/schema.prisma. */
  schemaPath?: string;
}

/** The outcome of a diff. */
export interface SchemaDiff {
  /** True when the two sides differ. */
  changed: boolean;
  /** The SQL that would take the first side to the second (Prisma's comment when unchanged). */
  sql: string;
}

/**
 * Diffs what the migrations directory builds (replayed into a shadow database) against the schema:
 * the SQL of the next migration, or nothing when they agree. This is `prisma migrate diff
 * --from-migrations <dir> --to-schema <schema> --script --exit-code`.
 *
 * @throws MigrationError `DATABASE_UNREACHABLE` (retryable), `MIGRATION_FAILED` when a migration
 *   does not replay, `MIGRATIONS_DIRECTORY_INVALID`.
 */
export async function diffMigrationsToSchema(options: DiffOptions): Promise<SchemaDiff> {
  // A first migration has no lock file yet; the engine needs one to pick the connector.
  const migrations = await readMigrationsList(options.migrationsDirectory ?? MIGRATIONS_PATH, {
    lockfileFallback: POSTGRES_LOCKFILE,
  });
  const schema = await readSchemaFile(options.schemaPath ?? SCHEMA_PATH);
  // Only shadow databases are used, so connect to the maintenance database: the check then works
  // before the target database exists and never touches it.
  const server = withDatabase(options.databaseUrl, MAINTENANCE_DATABASE);
  return runDiff(server, schema, { tag: "migrations", ...migrations }, "Replaying migrations");
}

/**
 * Diffs the live database at `options.databaseUrl` against the schema: empty when the database
 * has exactly the schema's tables, columns, indexes, enums and constraints.
 *
 * @throws MigrationError `DATABASE_UNREACHABLE` (retryable) when the server refuses connections.
 */
export async function diffDatabaseToSchema(
  options: Omit<DiffOptions, "migrationsDirectory">,
): Promise<SchemaDiff> {
  const schema = await readSchemaFile(options.schemaPath ?? SCHEMA_PATH);
  // "schemaDatasource" describes the database the engine's adapter is connected to; the
  // "url" target is refused by Prisma 7 ("--from-url ... no longer supported").
  const from: DiffTarget = { tag: "schemaDatasource", files: [schema], configDir: process.cwd() };
  return runDiff(options.databaseUrl, schema, from, "Describing the database");
}

async function runDiff(databaseUrl: string, schema: SchemaFile, from: DiffTarget, operation: string) {
  const options = { databaseUrl, schema, operation, failureCode: MigrationErrorCode.migrationFailed };
  return withSchemaEngine(options, async (engine): Promise<SchemaDiff> => {
    const result = await engine.diff({
      from,
      to: { tag: "schemaDatamodel", files: [schema] },
      script: true,
      exitCode: true,
      filters: NO_EXTERNAL_ENTITIES,
    });
    return { changed: result.exitCode === DIFF_NOT_EMPTY, sql: result.stdout ?? "" };
  });
}
