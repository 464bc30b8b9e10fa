#!/usr/bin/env node
/**
 * `npm run tenor -- <command>` (or the `tenor` bin): the operator CLI (docs/console.md). The
 * commands live in src/cli; this entry point passes in the environment and (loaded on demand) this
 * release's workflows, and sets the exit code.
 */
import process from "node:process";
import { runCli } from "../src/cli/cli.js";

process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  io: { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) },
  workflows: async () => (await import("../workers/application.js")).application.workflows,
});
