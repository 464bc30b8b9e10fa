import { createPrivateKey, type KeyObject } from "node:crypto";
import { ConfigError } from "../../config/config-error.js";
import type { TenorConfig } from "../../config/schema.js";
import { readSecret, type SecretReadOptions } from "../../config/secret.js";

const KEY = "evidence.signingKey";

/**
 * The Ed25519 key that signs evidence exports, read once at the api's composition root; undefined
 * when none is configured. A key that is not an Ed25519 private key in PKCS#8 PEM is a ConfigError
 * naming the key and its source (never the value), so the api refuses to start with it.
 */
export function loadEvidenceSigningKey(
  config: Pick<TenorConfig, "evidence">,
  secrets: SecretReadOptions,
): KeyObject | undefined {
  const source = config.evidence.signingKey;
  if (!source) return undefined;
  const secret = readSecret(KEY, source, secrets);
  const rule = "must be an Ed25519 private key in PKCS#8 PEM (openssl genpkey -algorithm ed25519)";
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: secret.reveal(), format: "pem" });
  } catch {
    throw new ConfigError([{ key: KEY, value: secret.source, rule }]);
  }
  if (key.asymmetricKeyType !== "ed25519") {
    throw new ConfigError([
      { key: KEY, value: secret.source, rule: `${rule}; got ${key.asymmetricKeyType}` },
    ]);
  }
  return key;
}
