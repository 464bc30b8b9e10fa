import { z } from "zod";
import { configSchema } from "../../src/config/schema.js";

/**
 * The `config` part of helm/tenor/values.schema.json, derived from the configuration schema
 * (src/config/schema.ts) so `helm lint` and `helm template` refuse what the roles would refuse at
 * start: an unknown key, a wrong type, a value out of range. The rest of values.schema.json
 * describes the chart's own keys and is kept by hand; only `properties.config` is generated.
 *
 * What a JSON Schema cannot say, the roles still check at start: cross-field rules (superRefine)
 * and URL schemes. Numbers are real YAML numbers here (the loader's string coercion exists for
 * environment variables, which the chart sets itself).
 */

/**
 * Keys the chart sets itself (from connection Secrets, `shutdown`, the role blocks and
 * `database`): the environment wins over the file, so a value here would be silently ignored.
 * They are removed from the generated schema, which then refuses them as unknown keys.
 */
export const CHART_OWNED_CONFIG_KEYS: readonly string[] = [
  "databaseUrl",
  "redisUrl",
  "shutdown",
  "database",
  "runner",
  "api.port",
  "api.healthPort",
  "indexer.healthPort",
];

type JsonSchema = Record<string, unknown>;

/** The JSON Schema (draft 7, what Helm 3 validates) of the chart's `config:` block. */
export function configValuesSchema(): JsonSchema {
  const schema = z.toJSONSchema(configSchema, { io: "input", target: "draft-7" }) as JsonSchema;
  delete schema.$schema;
  for (const dotted of CHART_OWNED_CONFIG_KEYS) removeKey(schema, dotted.split("."));
  schema.description =
    "Tenor's YAML configuration, generated from src/config/schema.ts by `npm run helm:schema` (do not edit). Keys the chart sets itself are refused.";
  return schema;
}

function removeKey(schema: JsonSchema, path: string[]): void {
  const [head, ...rest] = path as [string, ...string[]];
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (!properties?.[head]) throw new Error(`config key ${path.join(".")} is not in the configuration schema`);
  if (rest.length > 0) {
    removeKey(properties[head], rest);
    return;
  }
  delete properties[head];
  if (Array.isArray(schema.required)) {
    schema.required = schema.required.filter((k) => k !== head);
    if ((schema.required as string[]).length === 0) delete schema.required;
  }
  // A default mentioning the removed key would contradict the schema it belongs to.
  if (typeof schema.default === "object" && schema.default !== null) {
    delete (schema.default as Record<string, unknown>)[head];
  }
}

/** `valuesSchemaText` (the committed file) with its `config` part regenerated, as written to disk. */
export function renderValuesSchema(valuesSchemaText: string): string {
  const values = JSON.parse(valuesSchemaText) as JsonSchema & { properties: Record<string, unknown> };
  values.properties.config = configValuesSchema();
  return `${JSON.stringify(values, null, 2)}\n`;
}
