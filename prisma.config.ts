import { defineConfig } from "prisma/config";

/**
 * Prisma CLI configuration (Prisma 7 reads it instead of `url` in schema.prisma).
 *
 * The datasource URL comes from DATABASE_URL. It is read with `process.env` rather than Prisma's
 * `env()` helper on purpose: `env()` throws while the file loads, which would make
 * `npm run db:generate` (which needs no database) fail on machines without DATABASE_URL.
 * Tenor's own migration scripts (scripts/db) require DATABASE_URL and fail with a clear message.
 *
 * The paths here must match src/store/migrations/paths.ts (a test checks they agree).
 */
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL },
});
