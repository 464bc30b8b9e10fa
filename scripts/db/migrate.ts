/**
 * `npm run db:migrate`: creates the database named by DATABASE_URL if missing, then applies the
 * migrations in prisma/migrations that it has not applied yet (recorded in `_prisma_migrations`,
 * compatible with `prisma migrate deploy`). Exit 0 on success, 2 on any failure.
 */
import { applyMigrations, ensureDatabase, redactDatabaseUrl } from "../../src/store/migrations/index.js";
import { databaseUrlFromEnv, runCli } from "./cli.js";

await runCli("db:migrate", async () => {
  const url = databaseUrlFromEnv();
  const target = redactDatabaseUrl(url);
  const { created } = await ensureDatabase(url);
  if (created) console.log(`Created database ${target}`);
  const { applied, known } = await applyMigrations(url);
  for (const name of applied) console.log(`Applied ${name}`);
  console.log(
    applied.length === 0
      ? `${target} is up to date (${known.length} migrations).`
      : `Applied ${applied.length} of ${known.length} migrations to ${target}.`,
  );
  return 0;
});
