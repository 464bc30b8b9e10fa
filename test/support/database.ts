import { randomBytes } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { inject } from "vitest";
import { PrismaClient } from "../../src/generated/prisma/client.js";
import { quoteIdentifier, withDatabase } from "../../src/store/migrations/database-url.js";
import { withMaintenanceClient } from "../../src/store/migrations/ensure-database.js";

/** A migrated database of one's own, for one test file. */
export interface TestDatabase {
  /** Its name, `tenor_t_<random hex>`. */
  name: string;
  /** Its connection URL. */
  url: string;
  /** Generated Prisma client on `@prisma/adapter-pg`. */
  prisma: PrismaClient;
  /** A plain pg pool (max 4 connections), for raw SQL and for code that takes a pool. */
  pool: pg.Pool;
  /** Disconnects `prisma` and `pool`, then drops the database `WITH (FORCE)`. Idempotent. */
  drop(): Promise<void>;
}

/** PostgreSQL refuses to clone a template while another session is connected to it. */
const TEMPLATE_IN_USE = "55006";

/** Clone attempts before giving up while another run swaps or copies the template. */
const CLONE_ATTEMPTS = 20;

/**
 * Creates a uniquely named database cloned from the run's migrated template
 * (`CREATE DATABASE tenor_t_<random> TEMPLATE tenor_test_template`), so every test file starts
 * from exactly the migrated schema without sharing rows. Call in `beforeAll`, and `drop()` in
 * `afterAll`. Only usable in the `integration` project (its global setup provides the template).
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = inject("tenorTestServerUrl");
  const template = inject("tenorTemplateDatabase");
  const name = uniqueDatabaseName();
  await withMaintenanceClient(serverUrl, (client) => cloneTemplate(client, name, template));
  const url = withDatabase(serverUrl, name);
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url }) });
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  // Fault tests terminate backends on purpose and drop() ends with DROP DATABASE ... WITH (FORCE):
  // an idle connection's termination notice must not surface as an uncaught error.
  pool.on("error", () => undefined);
  let dropped = false;
  return {
    name,
    url,
    prisma,
    pool,
    async drop() {
      if (dropped) return;
      dropped = true;
      await Promise.allSettled([prisma.$disconnect(), pool.end()]);
      await withMaintenanceClient(serverUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`),
      );
    },
  };
}

/**
 * URL of a database name no one uses yet on the test server (`tenor_t_<random hex>`), not
 * created: for tests of code that creates or migrates databases itself. Drop it with
 * `dropDatabase(url)` from src/store/migrations in `afterAll`.
 */
export function scratchDatabaseUrl(): string {
  return withDatabase(inject("tenorTestServerUrl"), uniqueDatabaseName());
}

function uniqueDatabaseName(): string {
  return `tenor_t_${randomBytes(6).toString("hex")}`;
}

/**
 * Clones `template`, retrying briefly while it is in use (another file cloning at the same
 * instant holds it) or missing (a concurrent run is swapping in its rebuilt template).
 */
async function cloneTemplate(client: pg.Client, name: string, template: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.query(`CREATE DATABASE ${quoteIdentifier(name)} TEMPLATE ${quoteIdentifier(template)}`);
      return;
    } catch (error) {
      const code = (error as { code?: string }).code;
      const retryable = code === TEMPLATE_IN_USE || code === "3D000";
      if (!retryable || attempt >= CLONE_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}
