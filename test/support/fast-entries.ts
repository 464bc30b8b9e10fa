/**
 * The TypeScript entries the integration tests start as real processes (test/support/fast-entry.ts).
 * tsx's loader hooks run for every module a process imports, node_modules included: seconds of
 * CPU per spawn, which a loaded CI machine stretches into 30–45 s of startup. So the integration
 * project's global setup bundles these entries once per run (test/support/fast-entry-build.ts):
 * our TypeScript in ESM chunks, every package left to Node's own loader, so the tracing
 * instrumentations still patch them as they load, and a dynamic `import()` still loads its
 * module (and that module's packages) only when it runs, as workers/main.ts needs to start
 * tracing first. A process started from the bundle has the same cwd, env and, in each source
 * file, the same `import.meta.url` as under tsx.
 *
 * An entry missing from this list does not type-check at its spawn site: add it here.
 */
export const FAST_ENTRIES = [
  "workers/main.ts",
  "scripts/tenor.ts",
  "scripts/demo.ts",
  "scripts/demo-approval.ts",
  "scripts/ledger-rewind.ts",
  "test/fixtures/api-process.ts",
  "test/fixtures/asset-runner-process.ts",
  "test/fixtures/chain-runner-process.ts",
  "test/fixtures/fault-points-runner.ts",
  "test/fixtures/ledger-indexer-process.ts",
  "test/fixtures/module-paths-process.ts",
  "test/fixtures/runner-process.ts",
  "test/fixtures/shard-owner-process.ts",
  "test/api/fixtures/api-runner.ts",
  "test/chaos/fixtures/wake-sender.ts",
  "test/keyed/fixtures/keyed-runner.ts",
  "test/scale/fixtures/fault-roles.ts",
] as const;

declare module "vitest" {
  export interface ProvidedContext {
    /** Absolute directory of this run's entry bundle; "" when it could not be built (tsx then). */
    tenorFastEntryDirectory: string;
  }
}

/** A TypeScript entry (relative to the repository root) that tests spawn as a process. */
export type FastEntry = (typeof FAST_ENTRIES)[number];

/** Where the bundle puts `entry`, relative to the bundle's directory. */
export function bundledEntryPath(entry: FastEntry): string {
  return entry.replace(/\.ts$/, ".mjs");
}
