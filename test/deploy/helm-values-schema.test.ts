import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { configValuesSchema, renderValuesSchema } from "../../scripts/helm/config-values-schema.js";

/** helm/tenor/values.schema.json's `config` part is the configuration schema's, regenerated. */

const file = new URL("../../helm/tenor/values.schema.json", import.meta.url);

describe("helm/tenor/values.schema.json", () => {
  it("is current with src/config/schema.ts (npm run helm:schema)", () => {
    const committed = readFileSync(file, "utf8");
    expect(renderValuesSchema(committed)).toBe(committed);
  });

  it("refuses unknown config keys and leaves out the keys the chart sets itself", () => {
    const schema = configValuesSchema() as {
      additionalProperties: boolean;
      properties: Record<string, { properties?: Record<string, unknown> }>;
    };
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties)).not.toContain("databaseUrl");
    expect(Object.keys(schema.properties)).not.toContain("shutdown");
    expect(Object.keys(schema.properties.api!.properties!)).not.toContain("port");
    expect(Object.keys(schema.properties.webhooks!.properties!)).toContain("secretKeys");
  });
});
