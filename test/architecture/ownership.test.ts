import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { importEdges, sourceFiles } from "./import-graph.js";
import {
  foreignStoreImports,
  MUTABLE_BINDINGS_ALLOWED,
  moduleMutableBindings,
  sqlOutsideStore,
  storeClasses,
  storeConstructionsOutsideHost,
  storeOwner,
} from "./ownership-rules.js";

const ROOT = path.resolve(fileURLToPath(new URL("../..", import.meta.url)));
const FILES = sourceFiles(ROOT, ["src", "flows", "workers"]);
const EDGES = importEdges(ROOT, FILES);
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
const STORE_CLASSES = storeClasses(FILES.map((file) => ({ file, text: read(file) })));

describe("who owns the tables and the dependencies (docs/architecture.md)", () => {
  it("names the owner of a store folder, and none for the shared src/store", () => {
    expect(storeOwner("src/keyed/store/keyed-commands.ts")).toBe("src/keyed");
    expect(storeOwner("flows/assets/store/pg-assets.ts")).toBe("flows/assets");
    expect(storeOwner("src/store/pg-pool.ts")).toBeUndefined();
    expect(storeOwner("src/keyed/entity-batch.ts")).toBeUndefined();
  });

  it("finds a planted import of a feature's store from another feature", () => {
    const planted = [
      { from: "src/api/webhooks/routes.ts", to: "src/webhooks/store/pg-webhooks.ts" },
      { from: "src/webhooks/webhook-dispatcher.ts", to: "src/webhooks/store/pg-webhook-dispatch.ts" },
      { from: "src/roles/platform-api.ts", to: "src/webhooks/store/pg-webhooks.ts" },
      { from: "workers/application.ts", to: "flows/assets/store/pg-assets.ts" },
      { from: "flows/assets/api/routes.ts", to: "flows/assets/store/pg-assets.ts" },
      { from: "flows/organisations/api/routes.ts", to: "flows/assets/store/pg-assets.ts" },
    ];
    expect(foreignStoreImports(planted)).toEqual([
      "src/api/webhooks/routes.ts -> src/webhooks/store/pg-webhooks.ts",
      "flows/organisations/api/routes.ts -> flows/assets/store/pg-assets.ts",
    ]);
  });

  it("imports a feature's store/ only from that feature and the host", () => {
    expect(foreignStoreImports(EDGES)).toEqual([]);
  });

  it("finds planted SQL and a planted query call outside a store folder", () => {
    expect(sqlOutsideStore("src/keyed/entity-batch.ts", "await client.query(text, values);")).toBe(true);
    expect(sqlOutsideStore("src/api/x.ts", 'const sql = "SELECT id FROM executions";')).toBe(true);
    expect(sqlOutsideStore("src/api/x.ts", "// SELECT in a comment\nconst a = 1;")).toBe(false);
    expect(sqlOutsideStore("src/keyed/store/keyed-commands.ts", "await client.query(text);")).toBe(false);
  });

  it("keeps SQL and query calls in src/store and the features' store/ folders", () => {
    expect(FILES.filter((file) => sqlOutsideStore(file, read(file)))).toEqual([]);
  });

  it("knows the store classes, and finds a planted store construction outside the host", () => {
    expect(STORE_CLASSES.has("PgExecutionReads")).toBe(true);
    expect(STORE_CLASSES.has("PgWebhooks")).toBe(true);
    const text = "const reads = new PgExecutionReads(pool);\nconst at = new Date();";
    expect(storeConstructionsOutsideHost("src/api/executions/wake.ts", text, STORE_CLASSES)).toEqual([
      "src/api/executions/wake.ts: new PgExecutionReads",
    ]);
    expect(storeConstructionsOutsideHost("src/roles/platform-api.ts", text, STORE_CLASSES)).toEqual([]);
    expect(storeConstructionsOutsideHost("workers/application.ts", text, STORE_CLASSES)).toEqual([]);
  });

  it("builds stores only in src/roles, workers/, the CLI's entry and the store folders", () => {
    expect(FILES.flatMap((file) => storeConstructionsOutsideHost(file, read(file), STORE_CLASSES))).toEqual(
      [],
    );
  });

  it("finds a planted module-level binding and ignores nested ones", () => {
    const text =
      "let bound: Runtime | undefined;\nfunction f() {\n  let local = 1;\n}\nexport let other = 2;";
    expect(moduleMutableBindings("flows/x.ts", text)).toEqual(["flows/x.ts: bound", "flows/x.ts: other"]);
  });

  it("has no module-level mutable binding outside the allow-list, and no stale entry in it", () => {
    expect(FILES.flatMap((file) => moduleMutableBindings(file, read(file)))).toEqual([]);
    const stale = Object.keys(MUTABLE_BINDINGS_ALLOWED).filter(
      (file) =>
        !FILES.map((f) => f.split(path.sep).join("/")).includes(file) ||
        !/^(?:export\s+)?(?:let|var)\s/m.test(read(file)),
    );
    expect(stale).toEqual([]);
  });
});
