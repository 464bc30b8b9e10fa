import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  applyMigrations,
  diffDatabaseToSchema,
  dropDatabase,
  ensureDatabase,
  MigrationErrorCode,
} from "../../src/store/migrations/index.js";
import { migrationNames, readMigrationsList } from "../../src/store/migrations/migrations-directory.js";
import { MIGRATIONS_PATH } from "../../src/store/migrations/paths.js";
import { createTestDatabase, scratchDatabaseUrl, type TestDatabase } from "../support/database.js";

describe("prisma/migrations", () => {
  const url = scratchDatabaseUrl();

  beforeAll(async () => {
    await ensureDatabase(url);
  });

  afterAll(async () => {
    await dropDatabase(url);
  });

  it("builds exactly prisma/schema.prisma on an empty database", async () => {
    const before = await diffDatabaseToSchema({ databaseUrl: url });
    // The comparison can fail: an empty database differs from the schema.
    expect(before.changed).toBe(true);
    expect(before.sql).toContain('CREATE TABLE "executions"');

    const first = await applyMigrations(url);
    const known = migrationNames(await readMigrationsList(MIGRATIONS_PATH));
    expect(known.length).toBeGreaterThan(0);
    expect(first.applied).toEqual(known);

    const after = await diffDatabaseToSchema({ databaseUrl: url });
    expect(after.sql).not.toMatch(/CREATE|ALTER|DROP/);
    expect(after.changed).toBe(false);
  });

  it("applies nothing the second time and records every migration once, finished", async () => {
    const second = await applyMigrations(url);
    expect(second.applied).toEqual([]);
    expect(second.known.length).toBeGreaterThan(0);

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const rows = await client.query<{ migration_name: string; finished: boolean; rolled_back: boolean }>(
        `SELECT migration_name, finished_at IS NOT NULL AS finished, rolled_back_at IS NOT NULL AS rolled_back
           FROM _prisma_migrations ORDER BY migration_name`,
      );
      expect(rows.rows.map((row) => row.migration_name)).toEqual(second.known);
      expect(rows.rows.every((row) => row.finished && !row.rolled_back)).toBe(true);
    } finally {
      await client.end();
    }
  });

  it("serialises concurrent appliers: exactly one applies each migration", async () => {
    const concurrent = scratchDatabaseUrl();
    await ensureDatabase(concurrent);
    try {
      const results = await Promise.all([1, 2, 3].map(() => applyMigrations(concurrent)));
      const applied = results.flatMap((result) => result.applied).sort();
      expect(applied).toEqual([...results[0]!.known].sort());
    } finally {
      await dropDatabase(concurrent);
    }
  });
});

describe("applyMigrations failures", () => {
  it("says the database is missing instead of creating it", async () => {
    const missing = scratchDatabaseUrl();
    await expect(applyMigrations(missing)).rejects.toMatchObject({
      code: MigrationErrorCode.databaseMissing,
    });
  });

  it("says the server is unreachable, naming the URL without its password", async () => {
    const error = await applyMigrations("postgresql://postgres:hunter2@127.0.0.1:1/tenor").catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: MigrationErrorCode.databaseUnreachable, retryable: true });
    expect((error as Error).message).toContain("postgresql://postgres:***@127.0.0.1:1/tenor");
  });

  it("reports a migration that does not run, with the database error", async () => {
    const url = scratchDatabaseUrl();
    const directory = await mkdtemp(join(tmpdir(), "tenor-bad-migration-"));
    await mkdir(join(directory, "20300101000000_broken"));
    await writeFile(
      join(directory, "20300101000000_broken", "migration.sql"),
      "CREATE TABLE t (id no_such_type);\n",
    );
    await writeFile(join(directory, "migration_lock.toml"), 'provider = "postgresql"\n');
    await ensureDatabase(url);
    try {
      await expect(applyMigrations(url, { migrationsDirectory: directory })).rejects.toMatchObject({
        code: MigrationErrorCode.migrationFailed,
        message: expect.stringContaining("no_such_type"),
      });
    } finally {
      await dropDatabase(url);
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe("the template clone and the generated client", () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    await db?.drop();
  });

  it("reads and writes the migrated tables through Prisma on @prisma/adapter-pg", async () => {
    const id = crypto.randomUUID();
    await db.prisma.execution.create({
      data: { id, workflow: "smoke", workflowVersion: 1, status: "running", input: { n: 1 } },
    });
    await db.prisma.journalEntry.create({
      data: { executionId: id, position: 0, kind: "step", name: "first", state: "ok", result: 42, turn: 1 },
    });
    const found = await db.prisma.execution.findUniqueOrThrow({ where: { id }, include: { journal: true } });
    expect(found).toMatchObject({ workflow: "smoke", orgId: "default", turn: 0, input: { n: 1 } });
    expect(found.journal.map((entry) => entry.result)).toEqual([42]);

    const raw = await db.pool.query<{ count: string }>(
      "SELECT count(*) FROM journal_entries WHERE execution_id = $1",
      [id],
    );
    expect(raw.rows[0]?.count).toBe("1");
  });
});
