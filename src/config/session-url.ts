import type { TenorConfig } from "./schema.js";

/**
 * The URL the reserved sessions (shard ownership, runner liveness) connect to:
 * `database.sessionUrl` when set, else `databaseUrl`. The pools always use `databaseUrl`, which
 * may point at a transaction-mode PgBouncer; these sessions must reach PostgreSQL directly.
 */
export function reservedSessionUrl(config: Pick<TenorConfig, "databaseUrl" | "database">): string {
  return config.database.sessionUrl ?? config.databaseUrl;
}
