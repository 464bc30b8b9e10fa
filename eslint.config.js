/**
 * ESLint runs beside Biome for one rule only: the determinism rule of workflow bodies
 * (scripts/lint/workflow-determinism.js; why ESLint and not a Biome plugin: docs/writing-workflows.md,
 * "The determinism rule"). Biome stays the formatter and the general linter.
 */
import tsParser from "@typescript-eslint/parser";
import tenor from "./scripts/lint/workflow-determinism.js";

/**
 * Where workflows are defined: the application's flows, the engine's own (the chain lifecycle) and
 * the tutorial's example. test/lint/workflow-determinism.test.ts fails when a file elsewhere calls
 * `defineWorkflow`, so a new home for workflows is added here.
 */
export const WORKFLOW_FILES = ["flows/**/*.ts", "src/chain/lifecycle/**/*.ts", "test/tutorial/**/*.ts"];

export default [
  // Files that plant violations on purpose, for the rule's own test; and the build's output, which
  // the benchmark makes in the worktree (its generated client carries eslint-disable comments).
  { ignores: ["test/fixtures/lint/**", "dist/**"] },
  {
    files: WORKFLOW_FILES,
    languageOptions: { parser: tsParser, sourceType: "module" },
    linterOptions: { reportUnusedDisableDirectives: "off" },
    plugins: { tenor },
    rules: { "tenor/workflow-determinism": "error" },
  },
];
