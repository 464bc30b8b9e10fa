import { afterAll, describe, expect, it } from "vitest";
import { dropDatabase } from "../../src/store/migrations/index.js";
import { REPOSITORY_ROOT } from "../../src/store/migrations/paths.js";
import { scratchDatabaseUrl } from "../support/database.js";
import { spawnProcess } from "../support/processes.js";

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `npm run -s <script>` in the repository as a real subprocess with DATABASE_URL set (or removed). */
async function npmRun(script: string, databaseUrl: string | undefined): Promise<Run> {
  // npm needs the test's whole environment (its cache, config and node), only DATABASE_URL differs.
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && name !== "DATABASE_URL") env[name] = value;
  }
  if (databaseUrl !== undefined) env.DATABASE_URL = databaseUrl;
  const npm = spawnProcess(`npm run ${script}`, "npm", ["run", "-s", script], {
    cwd: REPOSITORY_ROOT,
    env,
    settleOn: "close",
  });
  const { code } = await npm.exit;
  return { code, stdout: npm.stdout(), stderr: npm.stderr() };
}

describe("npm run db:migrate", () => {
  const url = scratchDatabaseUrl();

  afterAll(async () => {
    await dropDatabase(url);
  });

  it("creates a missing database and applies every migration, then nothing", async () => {
    const first = await npmRun("db:migrate", url);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("Created database");
    expect(first.stdout).toMatch(/Applied \d{14}_init/);

    const second = await npmRun("db:migrate", url);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("is up to date");
    expect(second.stdout).not.toContain("Applied");
  });

  it("fails with the URL (no password) and how to start PostgreSQL when the server is unreachable", async () => {
    const run = await npmRun("db:migrate", "postgresql://postgres:hunter2@127.0.0.1:1/tenor");
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("DATABASE_UNREACHABLE");
    expect(run.stderr).toContain("postgresql://postgres:***@127.0.0.1:1/tenor");
    expect(run.stderr).not.toContain("hunter2");
    expect(run.stderr).toContain("pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start");
    expect(run.stderr).toContain("docker compose up -d postgres");
  });

  it("names DATABASE_URL when it is missing instead of picking a default", async () => {
    const run = await npmRun("db:migrate", undefined);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("DATABASE_URL is not set");
  });
});

describe("npm run db:check", () => {
  it("passes on the committed migrations and schema", async () => {
    const run = await npmRun("db:check", scratchDatabaseUrl());
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain("Migrations match prisma/schema.prisma.");
    expect(run.code).toBe(0);
  });
});
