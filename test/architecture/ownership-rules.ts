import path from "node:path";
import type { ImportEdge } from "./import-graph.js";

/**
 * The rules of who owns what (docs/architecture.md, "Who owns the tables" and "How a service
 * reaches a workflow"), each a function of file names and source text so a test can feed it a
 * planted violation as well as the tree.
 */

/**
 * What composes a process and so builds its stores and hands them in: the roles' host, the
 * composition root, and the `tenor` CLI's entry (the CLI's own composition root).
 */
export const HOST_FOLDERS = ["src/roles", "workers"] as const;
export const HOST_FILES = ["src/cli/cli.ts"] as const;

/** Module-level `let`/`var` bindings allowed, each with the reason it is not a hidden dependency. */
export const MUTABLE_BINDINGS_ALLOWED: Readonly<Record<string, string>> = {
  "src/values/decimal.ts": "accessor of the class's private field, set once by its static block",
  "src/values/gas-price.ts": "accessor of the class's private field, set once by its static block",
  "src/values/native-value.ts": "accessor of the class's private field, set once by its static block",
  "src/values/token-amount.ts": "accessor of the class's private field, set once by its static block",
  "src/observability/tracing-state.ts": "OpenTelemetry's SDK is process-global: started once per process",
  "src/store/migrations/wasm-schema-engine.ts": "memoised load of the WebAssembly schema engine",
};

/** Comments may name statements, classes or bindings; only code counts. */
export function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

function posix(file: string): string {
  return file.split(path.sep).join("/");
}

function under(file: string, folder: string): boolean {
  return posix(file).startsWith(`${folder}/`);
}

/**
 * The feature that owns the `store/` folder `file` is in: `src/keyed` for `src/keyed/store/x.ts`,
 * `flows/assets` for `flows/assets/store/x.ts`. Undefined outside a feature's store, and for
 * `src/store` itself: the shared plumbing and the engine's tables, imported downward like any layer.
 */
export function storeOwner(file: string): string | undefined {
  const parts = posix(file).split("/");
  const at = parts.indexOf("store", 1);
  if (at < 0 || (parts[0] === "src" && at === 1)) return undefined;
  return parts.slice(0, at).join("/");
}

/** True for a file in any store folder, the shared one included. */
export function inStoreFolder(file: string): boolean {
  return posix(file).split("/").includes("store");
}

/** Imports of a feature's `store/` from outside that feature and the host (the CLI's entry included). */
export function foreignStoreImports(edges: readonly ImportEdge[]): string[] {
  return edges
    .filter(({ from, to }) => {
      const owner = storeOwner(to);
      if (owner === undefined || under(from, owner)) return false;
      return (
        !HOST_FOLDERS.some((host) => under(from, host)) &&
        !(HOST_FILES as readonly string[]).includes(posix(from))
      );
    })
    .map(({ from, to }) => `${posix(from)} -> ${posix(to)}`);
}

const SQL = /\b(SELECT|INSERT INTO|DELETE FROM|UPDATE \w+ SET)\b|\.query\s*\(|\$queryRaw|\$executeRaw/;

/** Whether `file` runs or holds SQL outside a store folder. */
export function sqlOutsideStore(file: string, text: string): boolean {
  return !inStoreFolder(file) && SQL.test(stripComments(text));
}

/** The classes the store folders export (`export class PgWebhooks`), by name. */
export function storeClasses(files: readonly { file: string; text: string }[]): Set<string> {
  const names = files
    .filter(({ file }) => inStoreFolder(file))
    .flatMap(({ text }) =>
      [...stripComments(text).matchAll(/^export\s+class\s+(\w+)/gm)].map((m) => m[1] ?? ""),
    );
  return new Set(names);
}

/** Constructions (`new X(`) of a store class in a file outside the host and the store folders. */
export function storeConstructionsOutsideHost(
  file: string,
  text: string,
  classes: ReadonlySet<string>,
): string[] {
  const path = posix(file);
  if (inStoreFolder(file) || HOST_FOLDERS.some((host) => under(file, host))) return [];
  if ((HOST_FILES as readonly string[]).includes(path)) return [];
  return [...stripComments(text).matchAll(/\bnew\s+(\w+)\s*\(/g)]
    .map((match) => match[1] ?? "")
    .filter((name) => classes.has(name))
    .map((name) => `${path}: new ${name}`);
}

/**
 * Module-level `let` and `var` declarations (the formatter indents everything nested, so a
 * declaration at column 0 is a module's own) outside the allow-list.
 */
export function moduleMutableBindings(file: string, text: string): string[] {
  if (posix(file) in MUTABLE_BINDINGS_ALLOWED) return [];
  return [...stripComments(text).matchAll(/^(?:export\s+)?(?:let|var)\s+(\w+)/gm)].map(
    (match) => `${posix(file)}: ${match[1]}`,
  );
}
