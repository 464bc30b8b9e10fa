import type { Pool } from "pg";

/** The roles an API key can act in (DESIGN §6); the `ApiRole` enum of prisma/schema.prisma. */
export const API_ROLES = ["integrator", "approver", "operator", "admin"] as const;
export type ApiRole = (typeof API_ROLES)[number];

/** An API key as stored: never the key itself, only its SHA-256. */
export interface ApiKeyRecord {
  id: string;
  orgId: string;
  role: ApiRole;
  name: string;
  createdAt: string;
  revokedAt: string | null;
}

/** API keys on PostgreSQL (`api_keys`). Lookups are by hash, under a unique index. */
export class PgApiKeys {
  constructor(private readonly pool: Pool) {}

  async insert(key: {
    id: string;
    orgId: string;
    role: ApiRole;
    name: string;
    keyHash: string;
  }): Promise<ApiKeyRecord> {
    const { rows } = await this.pool.query(
      `INSERT INTO api_keys (id, org_id, role, name, key_hash) VALUES ($1, $2, $3::"ApiRole", $4, $5)
       RETURNING id, org_id, role, name, created_at, revoked_at`,
      [key.id, key.orgId, key.role, key.name, key.keyHash],
    );
    return toRecord(rows[0]);
  }

  /** The live (not revoked) key with this hash, or null. */
  async findActiveByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.pool.query(
      `SELECT id, org_id, role, name, created_at, revoked_at FROM api_keys
       WHERE key_hash = $1 AND revoked_at IS NULL`,
      [keyHash],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async list(orgId?: string): Promise<ApiKeyRecord[]> {
    const { rows } = await this.pool.query(
      `SELECT id, org_id, role, name, created_at, revoked_at FROM api_keys
       WHERE $1::text IS NULL OR org_id = $1 ORDER BY created_at, id`,
      [orgId ?? null],
    );
    return rows.map(toRecord);
  }

  /** Revokes the key; false when no live key has this id. */
  async revoke(id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      "UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL",
      [id],
    );
    return rowCount === 1;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: a pg row, typed by the SQL that returns it.
function toRecord(row: any): ApiKeyRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    role: row.role,
    name: row.name,
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at ? row.revoked_at.toISOString() : null,
  };
}
