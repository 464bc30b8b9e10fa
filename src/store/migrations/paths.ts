import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Where Tenor keeps its Prisma schema and migrations, as absolute paths resolved from this file
 * (so they do not depend on the process's working directory). prisma.config.ts names the same
 * paths relative to the repository root; test/store/paths.test.ts checks they agree.
 */
export const REPOSITORY_ROOT = repositoryRoot(fileURLToPath(new URL("../../../", import.meta.url)));

/**
 * Compiled code runs this file from `dist/src/store/migrations/` (`npm run build` keeps the source
 * layout under dist/), where three levels up is dist/ and the schema lives one level above it.
 */
function repositoryRoot(threeUp: string): string {
  if (existsSync(join(threeUp, "prisma", "schema.prisma"))) return threeUp;
  return `${dirname(threeUp.replace(/[/\\]$/, ""))}/`;
}

/** Relative to the repository root, as prisma.config.ts writes it. */
export const SCHEMA_RELATIVE_PATH = "prisma/schema.prisma";

/** Relative to the repository root, as prisma.config.ts writes it. */
export const MIGRATIONS_RELATIVE_PATH = "prisma/migrations";

/** Absolute path of prisma/schema.prisma. */
export const SCHEMA_PATH = fileURLToPath(new URL(SCHEMA_RELATIVE_PATH, `file://${REPOSITORY_ROOT}`));

/** Absolute path of prisma/migrations. */
export const MIGRATIONS_PATH = fileURLToPath(new URL(MIGRATIONS_RELATIVE_PATH, `file://${REPOSITORY_ROOT}`));
