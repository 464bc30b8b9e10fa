/**
 * `npm run helm:schema`: regenerates the `config` part of helm/tenor/values.schema.json from the
 * configuration schema (scripts/helm/config-values-schema.ts).
 * `npm run helm:schema -- --check`: exits 1 when the committed file is not current.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { renderValuesSchema } from "./config-values-schema.js";

const file = fileURLToPath(new URL("../../helm/tenor/values.schema.json", import.meta.url));
const committed = readFileSync(file, "utf8");
const generated = renderValuesSchema(committed);
if (process.argv.includes("--check")) {
  if (committed !== generated) {
    process.stderr.write(
      "helm/tenor/values.schema.json is stale: run `npm run helm:schema` and commit it.\n",
    );
    process.exit(1);
  }
  process.stdout.write("helm/tenor/values.schema.json is current.\n");
} else {
  writeFileSync(file, generated);
  process.stdout.write("Wrote helm/tenor/values.schema.json.\n");
}
