import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { entryCommand } from "./fast-entry.js";
import { killAllProcesses, repoRoot, spawnProcess } from "./processes.js";

/**
 * Spawned entries run from the bundle the global setup built (test/support/fast-entry.ts), and a
 * process started from it finds what its sources find next to themselves, as under tsx.
 */

afterAll(async () => {
  await killAllProcesses();
});

describe("fast entries", () => {
  it("start from this run's bundle, not through tsx", () => {
    const [command, args] = entryCommand("scripts/tenor.ts", ["doctor"]);
    expect(command).toBe(process.execPath);
    expect(args).not.toContain("tsx");
    const entry = args.find((arg) => arg.endsWith("scripts/tenor.mjs"));
    expect(entry, args.join(" ")).toBeDefined();
    expect(path.relative(repoRoot, entry as string)).toMatch(/^node_modules\/\.cache\/tenor-fast-entry\//);
    expect(existsSync(entry as string)).toBe(true);
    expect(args.at(-1)).toBe("doctor");
  });

  it("resolve each source's import.meta.url to the source file, not to the bundle", async () => {
    const probe = spawnProcess("module paths", ...entryCommand("test/fixtures/module-paths-process.ts"));
    const { code } = await probe.exit;
    expect(code, probe.output()).toBe(0);
    const root = `${repoRoot}/`;
    expect(JSON.parse(probe.stdout())).toEqual({
      repositoryRoot: root,
      migrations: path.join(root, "prisma", "migrations"),
      devEvidenceKey: path.join(root, "config", "dev", "evidence-signing-key.pem"),
      prismaClientDirectory: path.join(root, "src", "generated", "prisma"),
    });
  });
});
