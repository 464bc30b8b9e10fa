/**
 * The connection defaults of the quick start (scripts/quickstart.sh exports the same two; a test
 * holds them equal): a local PostgreSQL and Redis as Debian and `docker compose up -d redis
 * postgres` provide them. Scripts that talk to a quick-start deployment (the demos) start from
 * these, so they run as the README says without exporting anything.
 */
export const QUICK_START_DEFAULTS = {
  DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/tenor",
  REDIS_URL: "redis://127.0.0.1:6379",
} as const;

/** `env` with the quick start's URLs where it sets none (an empty value counts as none). */
export function withQuickStartDefaults(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string | undefined> {
  return {
    ...env,
    DATABASE_URL: env.DATABASE_URL || QUICK_START_DEFAULTS.DATABASE_URL,
    REDIS_URL: env.REDIS_URL || QUICK_START_DEFAULTS.REDIS_URL,
  };
}
