import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createMigration,
  diffMigrationsToSchema,
  MIGRATIONS_PATH,
  MigrationErrorCode,
  SCHEMA_PATH,
} from "../../src/store/migrations/index.js";
import { LOCKFILE_NAME, POSTGRES_LOCKFILE } from "../../src/store/migrations/migrations-directory.js";
import { scratchDatabaseUrl } from "../support/database.js";

/** Adds an optional column to the Signal model of a schema text. */
function withExtraSignalField(schema: string): string {
  const patched = schema.replace(/(model Signal \{\n)/, '$1  drift_probe String? @map("drift_probe")\n');
  if (patched === schema) throw new Error("model Signal not found in schema.prisma: update this test");
  return patched;
}

describe("drift check and new migrations", () => {
  // Only the server is used: shadow databases are created and dropped on it.
  const databaseUrl = scratchDatabaseUrl();
  let workdir: string;
  let driftedSchema: string;
  let migrations: string;

  beforeAll(async () => {
    workdir = await mkdtemp(join(tmpdir(), "tenor-drift-"));
    driftedSchema = join(workdir, "schema.prisma");
    migrations = join(workdir, "migrations");
    await writeFile(driftedSchema, withExtraSignalField(await readFile(SCHEMA_PATH, "utf8")));
    await cp(MIGRATIONS_PATH, migrations, { recursive: true });
  });

  afterAll(async () => {
    await rm(workdir, { recursive: true, force: true });
  });

  it("finds no drift between the committed migrations and schema.prisma", async () => {
    const diff = await diffMigrationsToSchema({ databaseUrl });
    expect(diff.changed).toBe(false);
  });

  it("reports a schema field that no migration creates, with the SQL that is missing", async () => {
    const diff = await diffMigrationsToSchema({ databaseUrl, schemaPath: driftedSchema });
    expect(diff.changed).toBe(true);
    expect(diff.sql).toContain('ALTER TABLE "signals" ADD COLUMN     "drift_probe" TEXT');
  });

  it("reports drift when the migrations directory is empty", async () => {
    const empty = join(workdir, "empty-migrations");
    const diff = await diffMigrationsToSchema({ databaseUrl, migrationsDirectory: empty });
    expect(diff.changed).toBe(true);
    expect(diff.sql).toContain('CREATE TABLE "executions"');
  });

  it("writes the missing SQL as a new migration in Prisma's layout, after which nothing drifts", async () => {
    const created = await createMigration("Add drift probe!", {
      databaseUrl,
      schemaPath: driftedSchema,
      migrationsDirectory: migrations,
      now: new Date("2031-02-03T04:05:06Z"),
    });
    expect(created.name).toBe("20310203040506_add_drift_probe");
    expect(created.file).toBe(join(migrations, created.name, "migration.sql"));
    expect(await readFile(created.file, "utf8")).toBe(created.sql);
    expect(created.sql).toContain('"drift_probe" TEXT');
    const folders = (await readdir(migrations, { withFileTypes: true })).filter((entry) =>
      entry.isDirectory(),
    );
    expect(
      folders
        .map((entry) => entry.name)
        .sort()
        .at(-1),
    ).toBe(created.name);

    const after = await diffMigrationsToSchema({
      databaseUrl,
      schemaPath: driftedSchema,
      migrationsDirectory: migrations,
    });
    expect(after.changed).toBe(false);
  });

  it("refuses to write an empty migration", async () => {
    const before = await readdir(migrations);
    await expect(
      createMigration("nothing", { databaseUrl, schemaPath: driftedSchema, migrationsDirectory: migrations }),
    ).rejects.toMatchObject({ code: MigrationErrorCode.migrationEmpty });
    expect(await readdir(migrations)).toEqual(before);
  });

  it("writes migration_lock.toml like prisma migrate dev when starting a history", async () => {
    const fresh = join(workdir, "fresh-migrations");
    const created = await createMigration("init", { databaseUrl, migrationsDirectory: fresh });
    expect(created.name).toMatch(/^\d{14}_init$/);
    expect(await readFile(join(fresh, LOCKFILE_NAME), "utf8")).toBe(POSTGRES_LOCKFILE);
    const committed = await readdir(MIGRATIONS_PATH);
    const committedInit = committed.find((name) => name.endsWith("_init"));
    expect(committedInit).toBeDefined();
    // A history started today creates every table the committed migrations create, together
    // (that they produce exactly the schema is the drift check's job, above).
    const committedSql = await Promise.all(
      committed
        .filter((name) => /^\d{14}_/.test(name))
        .map((name) => readFile(join(MIGRATIONS_PATH, name, "migration.sql"), "utf8")),
    );
    const tables = (sql: string) => [...sql.matchAll(/CREATE TABLE "(\w+)"/g)].map((m) => m[1]).sort();
    expect(tables(created.sql)).toEqual(tables(committedSql.join("\n")));
  });
});
