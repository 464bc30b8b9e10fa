import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, reservedSessionUrl } from "../../src/config/index.js";

/** Where the pools and the reserved sessions connect, and how the pools prepare statements. */

const base = {
  DATABASE_URL: "postgresql://svc@pgbouncer:6432/tenor",
  REDIS_URL: "redis://127.0.0.1:6379",
};

function issuesOf(env: Record<string, string>): string[] {
  try {
    loadConfig({ env: { ...base, ...env } });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).issues.map((i) => `${i.key} = ${String(i.value)}: ${i.rule}`);
  }
  return [];
}

describe("database.sessionUrl", () => {
  it("defaults to DATABASE_URL for the reserved sessions", () => {
    const config = loadConfig({ env: base });
    expect(config.database.sessionUrl).toBeUndefined();
    expect(reservedSessionUrl(config)).toBe(base.DATABASE_URL);
  });

  it("is set by TENOR_DATABASE_SESSION_URL, leaving DATABASE_URL to the pools", () => {
    const direct = "postgresql://svc@postgres:5432/tenor";
    const config = loadConfig({ env: { ...base, TENOR_DATABASE_SESSION_URL: direct } });
    expect(reservedSessionUrl(config)).toBe(direct);
    expect(config.databaseUrl).toBe(base.DATABASE_URL);
  });

  it("refuses a URL of another scheme, naming the key, the variable and the rule", () => {
    expect(issuesOf({ TENOR_DATABASE_SESSION_URL: "mysql://db/tenor" })).toEqual([
      "database.sessionUrl (TENOR_DATABASE_SESSION_URL) = mysql://db/tenor: must be a URL starting with postgres:// or postgresql://",
    ]);
  });
});

describe("database.namedStatements", () => {
  it("defaults to true and is turned off by TENOR_DATABASE_NAMED_STATEMENTS=false", () => {
    expect(loadConfig({ env: base }).database.namedStatements).toBe(true);
    const off = loadConfig({ env: { ...base, TENOR_DATABASE_NAMED_STATEMENTS: "false" } });
    expect(off.database.namedStatements).toBe(false);
  });

  it("refuses anything but true or false", () => {
    expect(issuesOf({ TENOR_DATABASE_NAMED_STATEMENTS: "no" })).toEqual([
      "database.namedStatements (TENOR_DATABASE_NAMED_STATEMENTS) = no: must be true or false",
    ]);
  });
});
