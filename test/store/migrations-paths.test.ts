import { join } from "node:path";
import { describe, expect, it } from "vitest";
import prismaConfig from "../../prisma.config.js";
import {
  parseDatabaseUrl,
  redactDatabaseUrl,
  withDatabase,
} from "../../src/store/migrations/database-url.js";
import { migrationSlug, migrationTimestamp } from "../../src/store/migrations/new-migration.js";
import {
  MIGRATIONS_PATH,
  MIGRATIONS_RELATIVE_PATH,
  REPOSITORY_ROOT,
  SCHEMA_PATH,
  SCHEMA_RELATIVE_PATH,
} from "../../src/store/migrations/paths.js";

describe("migration paths", () => {
  it("agree with prisma.config.ts", () => {
    expect(prismaConfig.schema).toBe(SCHEMA_RELATIVE_PATH);
    expect(prismaConfig.migrations?.path).toBe(MIGRATIONS_RELATIVE_PATH);
    expect(SCHEMA_PATH).toBe(join(REPOSITORY_ROOT, SCHEMA_RELATIVE_PATH));
    expect(MIGRATIONS_PATH).toBe(join(REPOSITORY_ROOT, MIGRATIONS_RELATIVE_PATH));
  });
});

describe("migration names", () => {
  it("slug like Prisma: lower case, other runs of characters become one underscore", () => {
    expect(migrationSlug("Add Signal index")).toBe("add_signal_index");
    expect(migrationSlug("  --init-- ")).toBe("init");
    expect(() => migrationSlug("!!!")).toThrow(/no letters or digits/);
  });

  it("start with the UTC time as yyyymmddHHMMSS", () => {
    expect(migrationTimestamp(new Date("2030-12-31T23:59:58.999Z"))).toBe("20301231235958");
  });
});

describe("database URLs", () => {
  it("hide the password and swap the database", () => {
    const url = "postgresql://tenor:s3cret@db.internal:5433/tenor?sslmode=require";
    expect(redactDatabaseUrl(url)).toBe("postgresql://tenor:***@db.internal:5433/tenor?sslmode=require");
    expect(withDatabase(url, "postgres")).toBe(
      "postgresql://tenor:s3cret@db.internal:5433/postgres?sslmode=require",
    );
  });

  it("name the variable when it is missing or unusable", () => {
    expect(() => parseDatabaseUrl(undefined, "DATABASE_URL")).toThrow("DATABASE_URL is not set");
    expect(() => parseDatabaseUrl("redis://127.0.0.1/0", "DATABASE_URL")).toThrow(
      "DATABASE_URL must use postgresql://",
    );
  });
});
