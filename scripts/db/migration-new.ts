/**
 * `npm run db:migration:new -- <name>`: writes prisma/migrations/<UTC timestamp>_<name>/migration.sql
 * with the SQL that takes the existing migrations to prisma/schema.prisma (Prisma's own layout,
 * plus migration_lock.toml when missing). Does not apply it. Needs DATABASE_URL for a server to
 * create throwaway shadow databases on. Exit 0 when written, 1 when there is nothing to write,
 * 2 on failure.
 */
import { relative } from "node:path";
import { createMigration, MigrationError, MigrationErrorCode } from "../../src/store/migrations/index.js";
import { databaseUrlFromEnv, runCli } from "./cli.js";

await runCli("db:migration:new", async () => {
  const name = process.argv.slice(2).join(" ");
  if (name.trim() === "") {
    throw new MigrationError(
      MigrationErrorCode.migrationNameInvalid,
      "Name the migration: npm run db:migration:new -- <name>, e.g. add_signal_index.",
    );
  }
  const created = await createMigration(name, { databaseUrl: databaseUrlFromEnv() });
  console.log(`Wrote ${relative(process.cwd(), created.file)}. Review it, then run npm run db:migrate.`);
  return 0;
});
