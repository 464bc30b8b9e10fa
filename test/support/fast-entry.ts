import path from "node:path";
import { inject } from "vitest";
import { bundledEntryPath, type FastEntry } from "./fast-entries.js";

export type { FastEntry } from "./fast-entries.js";

/**
 * The command and arguments that run `entry` (see test/support/fast-entries.ts) with `args`, for
 * `spawnProcess(name, ...entryCommand(entry, args), options)`: the bundle the global setup built,
 * with source maps so stack traces name the .ts files, or `node --import tsx <entry>` when there
 * is none (the build failed, or the caller runs outside the integration project).
 */
export function entryCommand(entry: FastEntry, args: readonly string[] = []): [string, string[]] {
  const directory = bundleDirectory();
  if (directory === "") return tsxCommand(entry, args);
  return [process.execPath, ["--enable-source-maps", path.join(directory, bundledEntryPath(entry)), ...args]];
}

/** `node --import tsx <entry> <args>`: for a process that itself imports TypeScript at run time. */
export function tsxCommand(entry: FastEntry, args: readonly string[] = []): [string, string[]] {
  return [process.execPath, ["--import", "tsx", entry, ...args]];
}

/** Provided by the integration project's global setup; nothing elsewhere. */
function bundleDirectory(): string {
  try {
    return inject("tenorFastEntryDirectory") ?? "";
  } catch {
    return "";
  }
}
