import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { quoteIdentifier } from "../../src/store/migrations/database-url.js";
import { withMaintenanceClient } from "../../src/store/migrations/ensure-database.js";
import { applyMigrations, redactDatabaseUrl, withDatabase } from "../../src/store/migrations/index.js";
import { buildFastEntries } from "./fast-entry-build.js";

/**
 * Global setup of the `integration` Vitest project: builds `tenor_test_template_<hash>`, a
 * database migrated with prisma/migrations, and provides it to test files, which clone it per file
 * (test/support/database.ts) in milliseconds instead of migrating. The name carries a hash of the
 * migrations, so runs of different checkouts on one server (branches with other migrations) never
 * clone each other's schema, and a run whose template already exists reuses it.
 *
 * Prerequisite: the Prisma client is generated (`npm run db:generate`, which the test scripts run
 * first). This setup fails fast when it is missing rather than generating it behind the run's back.
 */

const MIGRATIONS_DIRECTORY = fileURLToPath(new URL("../../prisma/migrations", import.meta.url));

/** Name of the migrated template every test database is cloned from: one per set of migrations. */
export const TEMPLATE_DATABASE = `tenor_test_template_${migrationsHash()}`;

/** SHA-256 (first 12 hex digits) of every migration's path and SQL, in order. */
function migrationsHash(): string {
  const hash = createHash("sha256");
  for (const entry of readdirSync(MIGRATIONS_DIRECTORY, { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    if (!entry.isDirectory()) continue;
    const file = path.join(MIGRATIONS_DIRECTORY, entry.name, "migration.sql");
    hash.update(entry.name).update("\0").update(readFileSync(file)).update("\0");
  }
  return hash.digest("hex").slice(0, 12);
}

/** Server used when TEST_DATABASE_URL is unset: the local test machine's PostgreSQL. Tests only. */
const DEFAULT_TEST_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/postgres";

/** Key of the advisory lock that serialises template rebuilds of concurrent runs on one server. */
const TEMPLATE_LOCK_KEY = 7_357_001;

declare module "vitest" {
  export interface ProvidedContext {
    /** Connection URL of the test server's maintenance database (any database on that server). */
    tenorTestServerUrl: string;
    /** Name of the freshly migrated template database to clone. */
    tenorTemplateDatabase: string;
  }
}

const GENERATED_CLIENT = fileURLToPath(new URL("../../src/generated/prisma/client.ts", import.meta.url));

/** Vitest global setup: see the module comment. */
export default async function setup(project: TestProject): Promise<void> {
  if (!existsSync(GENERATED_CLIENT)) {
    throw new Error(
      "The Prisma client is not generated (src/generated/prisma): run `npm run db:generate` first.",
    );
  }
  const serverUrl = process.env.TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL;
  if (!(await templateExists(serverUrl))) await rebuildTemplate(serverUrl);
  project.provide("tenorTestServerUrl", serverUrl);
  project.provide("tenorTemplateDatabase", TEMPLATE_DATABASE);
  project.provide("tenorFastEntryDirectory", await fastEntryDirectory());
  // A watch-mode rerun spawns the sources as they are now, not as they were at the first run.
  project.onTestsRerun(async () => project.provide("tenorFastEntryDirectory", await fastEntryDirectory()));
}

/** The spawned entries' bundle (test/support/fast-entries.ts); "" sends them through tsx. */
async function fastEntryDirectory(): Promise<string> {
  try {
    return await buildFastEntries();
  } catch (error) {
    console.warn("Spawned entries run through tsx: their bundle could not be built.", error);
    return "";
  }
}

async function templateExists(serverUrl: string): Promise<boolean> {
  return withMaintenanceClient(serverUrl, async (client) => {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [
      TEMPLATE_DATABASE,
    ]);
    return rowCount === 1;
  });
}

/**
 * Migrates a uniquely named build database, then swaps it in as the template under an advisory
 * lock. Building under another name means a concurrent run keeps cloning the previous template
 * (same migrations, same schema) until the swap, and the swap is a drop plus a rename.
 */
async function rebuildTemplate(serverUrl: string): Promise<void> {
  const build = `${TEMPLATE_DATABASE}_build_${randomBytes(4).toString("hex")}`;
  await withMaintenanceClient(serverUrl, (client) =>
    client.query(`CREATE DATABASE ${quoteIdentifier(build)}`),
  );
  try {
    await applyMigrations(withDatabase(serverUrl, build));
    await withMaintenanceClient(serverUrl, async (client) => {
      await client.query("SELECT pg_advisory_lock($1)", [TEMPLATE_LOCK_KEY]);
      try {
        await client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(TEMPLATE_DATABASE)} WITH (FORCE)`);
        await client.query(
          `ALTER DATABASE ${quoteIdentifier(build)} RENAME TO ${quoteIdentifier(TEMPLATE_DATABASE)}`,
        );
      } finally {
        await client.query("SELECT pg_advisory_unlock($1)", [TEMPLATE_LOCK_KEY]);
      }
    });
  } catch (error) {
    await withMaintenanceClient(serverUrl, (client) =>
      client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(build)} WITH (FORCE)`),
    ).catch(() => {});
    throw new Error(`Could not build ${TEMPLATE_DATABASE} on ${redactDatabaseUrl(serverUrl)}`, {
      cause: error,
    });
  }
}
