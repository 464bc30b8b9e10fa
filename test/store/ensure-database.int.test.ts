import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import {
  dropDatabase,
  ensureDatabase,
  MigrationError,
  MigrationErrorCode,
  withDatabase,
} from "../../src/store/migrations/index.js";
import { scratchDatabaseUrl } from "../support/database.js";

async function databaseExists(url: string, name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: withDatabase(url, "postgres") });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    return found.rowCount === 1;
  } finally {
    await client.end();
  }
}

describe("ensureDatabase", () => {
  const url = scratchDatabaseUrl();
  const name = new URL(url).pathname.slice(1);

  afterAll(async () => {
    await dropDatabase(url);
  });

  it("creates a missing database, then reports it as existing", async () => {
    expect(await databaseExists(url, name)).toBe(false);
    expect(await ensureDatabase(url)).toEqual({ database: name, created: true });
    expect(await databaseExists(url, name)).toBe(true);
    expect(await ensureDatabase(url)).toEqual({ database: name, created: false });
  });

  it("lets exactly one of several concurrent callers create the database", async () => {
    const racing = scratchDatabaseUrl();
    try {
      const results = await Promise.all([1, 2, 3, 4].map(() => ensureDatabase(racing)));
      expect(results.filter((result) => result.created)).toHaveLength(1);
    } finally {
      expect(await dropDatabase(racing)).toBe(true);
    }
  });

  it("names the URL without its password and says how to start PostgreSQL when unreachable", async () => {
    const error = await ensureDatabase("postgresql://postgres:hunter2@127.0.0.1:1/tenor").catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MigrationError);
    const failure = error as MigrationError;
    expect(failure.code).toBe(MigrationErrorCode.databaseUnreachable);
    expect(failure.retryable).toBe(true);
    expect(failure.message).toContain("postgresql://postgres:***@127.0.0.1:1/tenor");
    expect(failure.message).not.toContain("hunter2");
    expect(failure.message).toContain("pg_ctlcluster");
  });

  it("refuses URLs that are not PostgreSQL or name no database", async () => {
    for (const bad of [
      "",
      "mysql://root@127.0.0.1/tenor",
      "postgresql://postgres@127.0.0.1:5432/",
      "nonsense",
    ]) {
      await expect(ensureDatabase(bad)).rejects.toMatchObject({
        code: MigrationErrorCode.databaseUrlInvalid,
      });
    }
  });
});
