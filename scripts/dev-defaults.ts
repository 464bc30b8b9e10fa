import { fileURLToPath } from "node:url";

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

/**
 * Development keys, public by construction (committed, like anvil's first account): the quick start
 * and docker compose use them so webhook subscriptions and evidence exports work out of the box.
 * Never for production: anyone can decrypt what the webhook key encrypts and forge what the
 * evidence key signs.
 */
export const DEV_WEBHOOK_KEY_ENV = "TENOR_DEV_WEBHOOK_KEY";
/** 32 bytes, base64 (AES-256-GCM); docker-compose.yml sets the same value (a test holds them equal). */
export const DEV_WEBHOOK_KEY = Buffer.from("development-only-webhook-key-001").toString("base64");
/** The development Ed25519 evidence signing key (PKCS#8 PEM), config/dev/evidence-signing-key.pem. */
export const DEV_EVIDENCE_KEY_FILE = fileURLToPath(
  new URL("../config/dev/evidence-signing-key.pem", import.meta.url),
);
