/**
 * `npm run db:check`: drift check. Replays prisma/migrations into a throwaway shadow database and
 * compares the result with prisma/schema.prisma. Exit 0 when they agree; 1 with the missing SQL
 * on stdout when they do not (run `npm run db:migration:new -- <name>`); 2 on failure. Needs
 * DATABASE_URL for a server to create the shadow database on.
 */
import { diffMigrationsToSchema } from "../../src/store/migrations/index.js";
import { databaseUrlFromEnv, EXIT_FINDING, runCli } from "./cli.js";

await runCli("db:check", async () => {
  const diff = await diffMigrationsToSchema({ databaseUrl: databaseUrlFromEnv() });
  if (!diff.changed) {
    console.log("Migrations match prisma/schema.prisma.");
    return 0;
  }
  process.stdout.write(diff.sql.endsWith("\n") ? diff.sql : `${diff.sql}\n`);
  process.stderr.write(
    "db:check: SCHEMA_DRIFT: prisma/migrations does not produce prisma/schema.prisma; the SQL above is " +
      "missing. Run npm run db:migration:new -- <name> to add it as a migration.\n",
  );
  return EXIT_FINDING;
});
