import type { Pool } from "pg";
import type { AssetTemplates } from "../flows/assets/ports.js";
import { PgAssets } from "../flows/assets/store/pg-assets.js";
import type { AssetTemplateConfig } from "../src/config/asset-templates-schema.js";

/** The asset ports over the configuration's templates and the `assets` table (flows/assets/ports.ts). */
export function assetPorts(templates: readonly AssetTemplateConfig[], pool: Pool) {
  const byId = new Map(templates.map((t) => [t.id, t]));
  const configured: AssetTemplates = { get: (id) => byId.get(id) };
  return { templates: configured, registry: new PgAssets(pool) };
}
