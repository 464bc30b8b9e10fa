import { spawn } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { dropDatabase } from "../../src/store/migrations/index.js";
import { REPOSITORY_ROOT } from "../../src/store/migrations/paths.js";
import { scratchDatabaseUrl } from "../support/database.js";

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `npm run -s <script>` in the repository as a real subprocess with DATABASE_URL set (or removed). */
function npmRun(script: string, databaseUrl: string | undefined): Promise<Run> {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  if (databaseUrl !== undefined) env.DATABASE_URL = databaseUrl;
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["run", "-s", script], { cwd: REPOSITORY_ROOT, env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
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
