/**
 * Tenor's database preparation: create the database, apply Prisma migrations with the
 * WebAssembly schema engine (no native engine, no network), diff and drift-check them.
 * Roles call {@link ensureDatabase} then {@link applyMigrations} at start-up; scripts/db wraps
 * the same functions as `npm run db:migrate`, `db:migration:new` and `db:check`.
 */
export { databaseName, parseDatabaseUrl, redactDatabaseUrl, withDatabase } from "./database-url.js";
export { type DiffOptions, diffDatabaseToSchema, diffMigrationsToSchema, type SchemaDiff } from "./diff.js";
export { dropDatabase, type EnsureDatabaseResult, ensureDatabase } from "./ensure-database.js";
export { type ApplyMigrationsOptions, type ApplyMigrationsResult, applyMigrations } from "./migrate.js";
export { MigrationError, MigrationErrorCode, POSTGRES_START_HINT } from "./migration-error.js";
export { type CreatedMigration, createMigration, migrationSlug } from "./new-migration.js";
export { MIGRATIONS_PATH, SCHEMA_PATH } from "./paths.js";
