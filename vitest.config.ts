import { defineConfig } from "vitest/config";

/**
 * Two projects: `unit` (no I/O, `*.test.ts`) and `integration` (real PostgreSQL, Redis and
 * processes, `*.int.test.ts`). Every integration file gets its own database and Redis prefix
 * (see test/support), so files run in parallel.
 */
export default defineConfig({
  test: {
    // Per-file durations of every run land in test-results/vitest.json: where the suite's time goes.
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: ["test/**/*.int.test.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/**/*.int.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          pool: "forks",
        },
      },
    ],
  },
});
