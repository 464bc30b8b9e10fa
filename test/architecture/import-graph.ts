import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** One relative import of a TypeScript file: both sides as paths from the repository root. */
export interface ImportEdge {
  from: string;
  to: string;
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"(\.{1,2}\/[^"]+)"|(?:^|\n)\s*import\s+"(\.{1,2}\/[^"]+)"|import\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g;
/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"(\.{1,2}\/[^"]+)"|import\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g;

/** Every `.ts` file under the given folders of `root` (generated code and dependencies left out). */
export function sourceFiles(root: string, folders: readonly string[]): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const child = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "generated" && entry.name !== "node_modules") walk(child);
      } else if (entry.name.endsWith(".ts")) files.push(child);
    }
  };
  for (const folder of folders) walk(folder);
  return files.sort();
}

/** The relative imports (type-only ones included: they shape the code as much) of the files. */
export function importEdges(root: string, files: readonly string[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const from of files) {
    const text = readFileSync(path.join(root, from), "utf8");
    for (const match of text.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? match[3];
      if (!specifier) continue;
      const to = path.normalize(path.join(path.dirname(from), specifier)).replace(/\.js$/, ".ts");
      edges.push({ from, to });
    }
  }
  return edges;
}

/** The folders of a feature under `flows/<feature>/` that are layers above its workflow code. */
const FEATURE_LAYERS = new Set(["store", "api", "schedules"]);

/**
 * The layer a file belongs to: `src/<folder>` for the product; for an application feature under
 * `flows/<feature>/`, its `store/`, `api/` and `schedules/` folders are layers of their own
 * (`flows/store`, `flows/api`, `flows/schedules`: a feature's storage, routes and runner schedules
 * sit above the workflow code they serve); the top folder otherwise.
 */
export function layerOf(file: string): string {
  const parts = file.split(path.sep);
  if (parts[0] === "src") return parts.length > 2 ? `src/${parts[1]}` : "src";
  if (parts[0] === "flows" && parts.length > 3 && FEATURE_LAYERS.has(parts[2] ?? "")) {
    return `flows/${parts[2]}`;
  }
  return parts[0] ?? file;
}

/** Import cycles among the files (each reported once, as the files in order). */
export function findCycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    stack.push(file);
    for (const target of next.get(file) ?? []) {
      const seen = state.get(target);
      if (seen === "open") cycles.push(stack.slice(stack.indexOf(target)));
      else if (seen === undefined) visit(target);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of [...next.keys()].sort()) if (!state.has(file)) visit(file);
  return cycles;
}
