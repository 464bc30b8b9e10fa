import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { inspect } from "node:util";
import { ConfigError } from "../config/config-error.js";
import type { TenorConfig } from "../config/schema.js";
import { readSecret, type Secret, type SecretReadOptions } from "../config/secret.js";
import { TenorError } from "../errors/tenor-error.js";
import { WEBHOOK_ERRORS } from "../errors/webhook-errors.js";
import type { SealedWebhookSecret } from "./store/pg-webhook-secrets.js";

const CONFIG_KEY = "webhooks.secretKeys";
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Prefix of a sealed secret: the format of what follows, so it can change without a guess. */
const FORMAT = "v1.";
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** One configured key: its id (stored beside each secret it seals) and its 32 bytes. */
export interface WebhookSecretKey {
  id: string;
  key: Buffer;
}

/**
 * The keys that encrypt webhook signing secrets at rest (docs/webhooks.md, "Secrets"):
 * AES-256-GCM with a random 96-bit nonce per secret, the subscription id and key id bound as
 * associated data (a sealed secret copied onto another row does not open). The first key seals;
 * every key opens the secrets sealed under its id. A secret stored with no key id is plaintext and
 * opens as is. Printing a keyring shows its key ids only.
 */
export class WebhookSecretKeyring {
  readonly #keys: ReadonlyMap<string, Buffer>;
  /** Id of the key new secrets are sealed with; null when no key is configured. */
  readonly primaryKeyId: string | null;
  /** Whether, with no key, new secrets may be stored in plain text (`webhooks.plaintextSecrets`). */
  readonly plaintextAllowed: boolean;

  constructor(keys: readonly WebhookSecretKey[], options: { plaintextAllowed: boolean }) {
    this.#keys = new Map(keys.map((k) => [k.id, Buffer.from(k.key)]));
    this.primaryKeyId = keys[0]?.id ?? null;
    this.plaintextAllowed = options.plaintextAllowed;
  }

  /** Ids of the configured keys, the sealing one first. */
  keyIds(): string[] {
    return [...this.#keys.keys()];
  }

  /**
   * Seals a new secret of subscription `subscriptionId` with the first key. Without a key it is
   * stored as is when plaintext is allowed, and refused with WEBHOOK_SECRET_KEY_MISSING otherwise.
   */
  seal(subscriptionId: string, secret: string): SealedWebhookSecret {
    const keyId = this.primaryKeyId;
    if (keyId === null) {
      if (this.plaintextAllowed) return { keyId: null, sealed: secret };
      throw new TenorError(
        WEBHOOK_ERRORS.WEBHOOK_SECRET_KEY_MISSING,
        `webhook signing secrets are encrypted at rest and no key is configured: set ${CONFIG_KEY} ` +
          "(or webhooks.plaintextSecrets: true, in development only)",
        { details: { key: CONFIG_KEY } },
      );
    }
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#keys.get(keyId) as Buffer, nonce);
    cipher.setAAD(associatedData(subscriptionId, keyId));
    const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
    const sealed = Buffer.concat([nonce, body, cipher.getAuthTag()]).toString("base64url");
    return { keyId, sealed: `${FORMAT}${sealed}` };
  }

  /**
   * The secret of subscription `subscriptionId`. Throws WEBHOOK_SECRET_KEY_MISSING when it was
   * sealed under a key id this keyring lacks, WEBHOOK_SECRET_UNREADABLE when the key under that id
   * does not open it (the key was replaced, or the row was altered); both name the key id.
   */
  open(subscriptionId: string, stored: SealedWebhookSecret): string {
    const { keyId } = stored;
    if (keyId === null) return stored.sealed;
    const key = this.#keys.get(keyId);
    if (key === undefined)
      throw new TenorError(
        WEBHOOK_ERRORS.WEBHOOK_SECRET_KEY_MISSING,
        `the signing secret of subscription ${subscriptionId} is encrypted with ${CONFIG_KEY} id ` +
          `${JSON.stringify(keyId)}, which is not configured here (configured: ${this.describeIds()})`,
        { details: { key: CONFIG_KEY, keyId, subscriptionId } },
      );
    const unreadable = () =>
      new TenorError(
        WEBHOOK_ERRORS.WEBHOOK_SECRET_UNREADABLE,
        `the signing secret of subscription ${subscriptionId} does not decrypt with ${CONFIG_KEY} id ` +
          `${JSON.stringify(keyId)}: that id must keep the key it had when the secret was encrypted`,
        { details: { key: CONFIG_KEY, keyId, subscriptionId } },
      );
    if (!stored.sealed.startsWith(FORMAT)) throw unreadable();
    const raw = Buffer.from(stored.sealed.slice(FORMAT.length), "base64url");
    if (raw.length < NONCE_BYTES + TAG_BYTES) throw unreadable();
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, NONCE_BYTES));
      decipher.setAAD(associatedData(subscriptionId, keyId));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      const body = raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
    } catch {
      throw unreadable();
    }
  }

  toString(): string {
    return `[webhook secret keyring ${this.describeIds()}]`;
  }

  toJSON(): string {
    return this.toString();
  }

  [inspect.custom](): string {
    return this.toString();
  }

  private describeIds(): string {
    return this.#keys.size === 0 ? "none" : this.keyIds().join(", ");
  }
}

function associatedData(subscriptionId: string, keyId: string): Buffer {
  return Buffer.from(`tenor.webhook-secret.v1:${subscriptionId}:${keyId}`, "utf8");
}

/**
 * Reads `webhooks.secretKeys` at a role's composition root. A key that is not 32 bytes in base64
 * is a ConfigError naming the key, its source and the shape it had (never the value), so the role
 * refuses to start with it.
 */
export function loadWebhookSecretKeyring(
  settings: Pick<TenorConfig["webhooks"], "secretKeys" | "plaintextSecrets">,
  secrets: SecretReadOptions,
): WebhookSecretKeyring {
  const keys = settings.secretKeys.map((entry, index) => {
    const configKey = `${CONFIG_KEY}.${index}.key`;
    return { id: entry.id, key: decodeKey(configKey, readSecret(configKey, entry.key, secrets)) };
  });
  return new WebhookSecretKeyring(keys, { plaintextAllowed: settings.plaintextSecrets });
}

function decodeKey(configKey: string, secret: Secret): Buffer {
  const text = secret.reveal();
  const rule = `must be a 256-bit key in base64 (32 bytes, e.g. openssl rand -base64 32), read from ${secret.source}`;
  if (!BASE64.test(text))
    throw new ConfigError([
      {
        key: configKey,
        value: secret.source,
        rule: `${rule}; got ${text.length} characters that are not base64`,
      },
    ]);
  const key = Buffer.from(text, "base64");
  if (key.length !== KEY_BYTES)
    throw new ConfigError([
      {
        key: configKey,
        value: secret.source,
        rule: `${rule}; got ${text.length} base64 characters decoding to ${key.length} bytes`,
      },
    ]);
  return key;
}
