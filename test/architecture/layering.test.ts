import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { findCycles, importEdges, layerOf, sourceFiles } from "./import-graph.js";

/**
 * The house as docs/architecture.md draws it ("Layers"), bottom first: a folder may import the
 * folders of the rows below its own, never one of its own row or above. A new folder fails this
 * test until it is placed here (and in the document).
 */
const LAYERS: readonly (readonly string[])[] = [
  ["src/errors", "src/auth"],
  ["src/values"],
  ["src/config"],
  ["src/observability"],
  ["src/engine"],
  ["src/store"],
  ["src/transport"],
  ["src/runtime"],
  ["src/keyed", "src/ownership", "src/retention", "src/webhooks"],
  ["src/schedules"],
  ["src/chain"],
  ["src/ledger-index"],
  ["src/api"],
  ["src/roles", "src/cli"],
  ["src/testing"],
  ["workers"],
];

/** Imports outside the rows: the generated Prisma client is the store's alone; the domain's own list. */
const ALSO: Readonly<Record<string, readonly string[]>> = {
  "src/store": ["src/generated"],
  workers: ["flows"],
};

/** The domain: workflows written against the engine and the chain boundary, nothing of the host. */
const FLOWS_MAY_IMPORT = ["src/errors", "src/values", "src/engine", "src/keyed", "src/chain"];

const BELOW: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  LAYERS.flatMap((row, index) =>
    row.map((folder) => [folder, [...LAYERS.slice(0, index).flat(), ...(ALSO[folder] ?? [])]]),
  ),
);

const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  ...BELOW,
  flows: FLOWS_MAY_IMPORT,
  /** A feature's storage: its workflow code's ports, over the shared plumbing of src/store. */
  "flows/store": [...new Set([...FLOWS_MAY_IMPORT, "flows", "src/store", ...(BELOW["src/store"] ?? [])])],
  /** A feature's routes: the stores they are handed and the API's building blocks. */
  "flows/api": [
    ...new Set([...FLOWS_MAY_IMPORT, "flows", "flows/store", "src/api", ...(BELOW["src/api"] ?? [])]),
  ],
  /** A feature's runner schedules: its workflow code's passes, as the runner's schedules run them. */
  "flows/schedules": [
    ...new Set([...FLOWS_MAY_IMPORT, "flows", "src/schedules", ...(BELOW["src/schedules"] ?? [])]),
  ],
  workers: [...(BELOW.workers ?? []), "flows/store", "flows/api", "flows/schedules"],
};

const ROOT = path.resolve(fileURLToPath(new URL("../..", import.meta.url)));
const FILES = sourceFiles(ROOT, ["src", "flows", "workers"]);
const EDGES = importEdges(ROOT, FILES);

describe("layering (docs/architecture.md)", () => {
  it("reads the import graph (a broken reader would pass every rule)", () => {
    expect(FILES.length).toBeGreaterThan(100);
    expect(EDGES.some((e) => e.from === "workers/main.ts" && e.to === "src/roles/role-process.ts")).toBe(
      true,
    );
    expect(
      EDGES.some((e) => e.from === "src/engine/context.ts" && e.to === "src/engine/context-types.ts"),
    ).toBe(true);
  });

  it("places every folder of src/ in a layer", () => {
    const unplaced = [...new Set(FILES.map(layerOf))].filter(
      (layer) => !(layer in MAY_IMPORT) && layer !== "src",
    );
    expect(unplaced).toEqual([]);
  });

  it("imports only downward", () => {
    const violations = EDGES.filter(({ from, to }) => {
      const a = layerOf(from);
      const b = layerOf(to);
      return a !== b && !(MAY_IMPORT[a] ?? []).includes(b);
    }).map(({ from, to }) => `${from} -> ${to}`);
    expect(violations).toEqual([]);
  });

  it("has no import cycle between files (type-only imports included)", () => {
    expect(findCycles(EDGES).map((cycle) => cycle.join(" -> "))).toEqual([]);
  });

  it("keeps SQL in src/store and the store/ folders of the features that own the tables", () => {
    const outside = FILES.filter((file) => !file.split(path.sep).includes("store")).filter((file) =>
      /\b(SELECT|INSERT INTO|DELETE FROM|UPDATE \w+ SET)\b/.test(readSource(file)),
    );
    expect(outside).toEqual([]);
  });
});

function readSource(file: string): string {
  // Comments may name statements; only code counts.
  return stripComments(readFileSync(path.join(ROOT, file), "utf8"));
}

function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}
