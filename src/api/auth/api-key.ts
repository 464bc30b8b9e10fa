import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { ApiRole } from "../../auth/api-roles.js";
import type { ApiKeyRecord, PgApiKeys } from "../../store/pg-api-keys.js";

/** Every issued key starts with this, so a leaked one is recognisable (secret scanners, log redaction). */
export const API_KEY_PREFIX = "tnr_";

/** SHA-256 (hex) of a presented key: the only form a key is stored or looked up in. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/** A new random key: the prefix and 32 random bytes in base64url (256 bits). */
export function generateApiKey(): string {
  return `${API_KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
}

/**
 * Issues a key for one organisation and role, or for a platform role (`orgId: null`), to one
 * subject (the person or system that holds it). Returns the key itself exactly once: only its hash
 * is stored, so it cannot be shown again (issue a new one and revoke the old one instead).
 * Used by `npm run tenor -- keys create` and the demo. Throws when the role and organisation disagree.
 */
export async function issueApiKey(
  keys: PgApiKeys,
  request: { orgId: string | null; role: ApiRole; subject: string; name?: string },
): Promise<{ key: string; record: ApiKeyRecord }> {
  const key = generateApiKey();
  const record = await keys.insert({
    id: randomUUID(),
    orgId: request.orgId,
    role: request.role,
    name: request.name ?? `${request.role}@${request.orgId ?? "platform"}`,
    subject: request.subject,
    keyHash: hashApiKey(key),
  });
  return { key, record };
}
