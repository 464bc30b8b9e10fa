/**
 * `npm run openapi`: writes openapi.json (committed) from the schemas the handlers use.
 * `npm run openapi -- --check`: exits 1 when the committed document is not current.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ALL_WORKFLOWS } from "../flows/index.js";
import { renderOpenApiDocument } from "../src/api/openapi/document.js";
import { applicationRoutes } from "../workers/api-routes.js";

const file = fileURLToPath(new URL("../openapi.json", import.meta.url));
const generated = renderOpenApiDocument(ALL_WORKFLOWS, applicationRoutes);
if (process.argv.includes("--check")) {
  let committed = "";
  try {
    committed = readFileSync(file, "utf8");
  } catch {
    // missing counts as stale
  }
  if (committed !== generated) {
    process.stderr.write("openapi.json is stale: run `npm run openapi` and commit the result.\n");
    process.exit(1);
  }
  process.stdout.write("openapi.json is current.\n");
} else {
  writeFileSync(file, generated);
  process.stdout.write("Wrote openapi.json.\n");
}
