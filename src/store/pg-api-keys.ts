import type { Pool } from "pg";

/** The roles that act inside one organisation (README, "API keys and roles"). */
export const ORG_ROLES = ["integrator", "approver", "operator", "admin"] as const;
/** The roles that operate the platform's queues (Bull Board) and belong to no organisation. */
export const PLATFORM_ROLES = ["platform-operator", "platform-admin"] as const;
/** Every role an API key can act in: the `ApiRole` enum of prisma/schema.prisma. */
export const API_ROLES = [...ORG_ROLES, ...PLATFORM_ROLES] as const;
export type OrgRole = (typeof ORG_ROLES)[number];
export type PlatformRole = (typeof PLATFORM_ROLES)[number];
export type ApiRole = (typeof API_ROLES)[number];

export function isPlatformRole(role: string): role is PlatformRole {
  return (PLATFORM_ROLES as readonly string[]).includes(role);
}

/** An API key as stored: never the key itself, only its SHA-256. */
export interface ApiKeyRecord {
  id: string;
  /** Null exactly for the platform roles. */
  orgId: string | null;
  role: ApiRole;
  name: string;
  /** The person or system the key was issued to. */
  subject: string;
  createdAt: string;
  revokedAt: string | null;
}

const COLUMNS = "id, org_id, role::text AS role, name, subject, created_at, revoked_at";

/** API keys on PostgreSQL (`api_keys`). Lookups are by hash, under a unique index. */
export class PgApiKeys {
  constructor(private readonly pool: Pool) {}

  /** Throws when an organisation key lacks an organisation or a platform key has one. */
  async insert(key: {
    id: string;
    orgId: string | null;
    role: ApiRole;
    name: string;
    subject: string;
    keyHash: string;
  }): Promise<ApiKeyRecord> {
    if (isPlatformRole(key.role) !== (key.orgId === null)) {
      throw new Error(`role ${key.role} ${key.orgId === null ? "needs" : "takes no"} organisation`);
    }
    const { rows } = await this.pool.query(
      `INSERT INTO api_keys (id, org_id, role, name, subject, key_hash) VALUES ($1, $2, $3::"ApiRole", $4, $5, $6)
       RETURNING ${COLUMNS}`,
      [key.id, key.orgId, key.role, key.name, key.subject, key.keyHash],
    );
    return toRecord(rows[0]);
  }

  /** The live (not revoked) key with this hash, or null. */
  async findActiveByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.pool.query(
      `SELECT ${COLUMNS} FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
      [keyHash],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** The live (not revoked) key with this id, or null: how a board session learns its key was revoked. */
  async findActiveById(id: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.pool.query(
      `SELECT ${COLUMNS} FROM api_keys WHERE id = $1 AND revoked_at IS NULL`,
      [id],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async list(orgId?: string): Promise<ApiKeyRecord[]> {
    const { rows } = await this.pool.query(
      `SELECT ${COLUMNS} FROM api_keys
       WHERE $1::text IS NULL OR org_id = $1 ORDER BY created_at, id`,
      [orgId ?? null],
    );
    return rows.map(toRecord);
  }

  /** Revokes the key; null when no live key has this id, else the revoked key. */
  async revoke(id: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.pool.query(
      `UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING ${COLUMNS}`,
      [id],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: a pg row, typed by the SQL that returns it.
function toRecord(row: any): ApiKeyRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    role: row.role,
    name: row.name,
    subject: row.subject,
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at ? row.revoked_at.toISOString() : null,
  };
}
