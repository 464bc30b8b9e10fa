import { type DiffOptions, diffMigrationsToSchema } from "./diff.js";
import { MigrationError, MigrationErrorCode } from "./migration-error.js";
import { writeMigration } from "./migrations-directory.js";
import { MIGRATIONS_PATH } from "./paths.js";

/** Longest migration name kept after the timestamp (Prisma's CLI truncates at the same length). */
const MAX_NAME_LENGTH = 200;

/** What {@link createMigration} wrote. */
export interface CreatedMigration {
  /** Folder name, `<UTC yyyymmddHHMMSS>_<name>`. */
  name: string;
  /** Absolute path of the migration.sql written. */
  file: string;
  /** The migration's SQL. */
  sql: string;
}

/**
 * Turns a free-form name into the slug Prisma uses in migration folder names:
 * lower case, runs of other characters replaced by `_`.
 *
 * @throws MigrationError `MIGRATION_NAME_INVALID` when nothing usable remains.
 */
export function migrationSlug(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, MAX_NAME_LENGTH);
  if (slug === "") {
    throw new MigrationError(
      MigrationErrorCode.migrationNameInvalid,
      `Migration name ${JSON.stringify(name)} has no letters or digits: pass one, e.g. add_signal_index.`,
    );
  }
  return slug;
}

/** UTC timestamp prefix of a migration folder, as `prisma migrate dev` writes it (yyyymmddHHMMSS). */
export function migrationTimestamp(now: Date): string {
  return now.toISOString().replace(/[-:T]/g, "").slice(0, 14);
}

/**
 * Writes the next migration: the SQL that takes what the existing migrations build to the schema,
 * into `<migrations>/<timestamp>_<slug>/migration.sql` (and migration_lock.toml if missing),
 * exactly as `prisma migrate dev --create-only` lays it out. Does not apply it.
 *
 * @param name - free-form name, slugged with {@link migrationSlug}.
 * @param options.now - clock for the timestamp. Default: the current time.
 * @throws MigrationError `MIGRATION_EMPTY` when the schema already matches the migrations (nothing
 *   is written), `MIGRATION_NAME_INVALID`, and the errors of {@link diffMigrationsToSchema}.
 */
export async function createMigration(
  name: string,
  options: DiffOptions & { now?: Date },
): Promise<CreatedMigration> {
  const slug = migrationSlug(name);
  const diff = await diffMigrationsToSchema(options);
  if (!diff.changed) {
    throw new MigrationError(
      MigrationErrorCode.migrationEmpty,
      "The schema already matches the migrations: there is nothing to put in a new migration.",
    );
  }
  const folder = `${migrationTimestamp(options.now ?? new Date())}_${slug}`;
  const file = await writeMigration(options.migrationsDirectory ?? MIGRATIONS_PATH, folder, diff.sql);
  return { name: folder, file, sql: diff.sql };
}
