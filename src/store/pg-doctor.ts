import type { Pool } from "pg";

/** Server settings the doctor reads, by name: value with its unit (`0`, `30000 ms`, `100`). */
export async function readServerSettings(pool: Pool, names: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ name: string; setting: string; unit: string | null }>(
    "SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1::text[])",
    [names],
  );
  return new Map(
    rows.map((r) => [r.name, r.unit && r.setting !== "0" ? `${r.setting} ${r.unit}` : r.setting]),
  );
}

/** The value recorded under an `engine_settings` key, or null when no process recorded one yet. */
export async function readEngineSetting(pool: Pool, key: string): Promise<unknown> {
  const { rows } = await pool.query<{ value: unknown }>("SELECT value FROM engine_settings WHERE key = $1", [
    key,
  ]);
  return rows[0]?.value ?? null;
}

/**
 * Names of the migrations applied successfully (Prisma's `_prisma_migrations`); null when the
 * table does not exist (the database was never migrated).
 */
export async function appliedMigrationNames(pool: Pool): Promise<string[] | null> {
  const exists = await pool.query<{ t: string | null }>(
    "SELECT to_regclass('_prisma_migrations')::text AS t",
  );
  if (!exists.rows[0]?.t) return null;
  const { rows } = await pool.query<{ migration_name: string }>(
    `SELECT migration_name FROM _prisma_migrations
     WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
  );
  return rows.map((r) => r.migration_name);
}
