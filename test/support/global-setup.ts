import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { quoteIdentifier } from "../../src/store/migrations/database-url.js";
import { withMaintenanceClient } from "../../src/store/migrations/ensure-database.js";
import { applyMigrations, redactDatabaseUrl, withDatabase } from "../../src/store/migrations/index.js";

/**
 * Global setup of the `integration` Vitest project: builds `tenor_test_template`, a database
 * migrated with prisma/migrations, once per run, and provides it to test files, which clone it
 * per file (test/support/database.ts) in milliseconds instead of migrating.
 *
 * Prerequisite: the Prisma client is generated (`npm run db:generate`, which the test scripts run
 * first). This setup fails fast when it is missing rather than generating it behind the run's back.
 */

/** Name of the migrated template every test database is cloned from. */
export const TEMPLATE_DATABASE = "tenor_test_template";

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
  await rebuildTemplate(serverUrl);
  project.provide("tenorTestServerUrl", serverUrl);
  project.provide("tenorTemplateDatabase", TEMPLATE_DATABASE);
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
