import { randomBytes, randomUUID } from "node:crypto";
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/index.js";
import { TenorError } from "../../src/errors/tenor-error.js";
import { loadWebhookSecretKeyring, WebhookSecretKeyring } from "../../src/webhooks/secret-keyring.js";
import { newWebhookSecret } from "../../src/webhooks/signature.js";

/**
 * The keyring that encrypts webhook signing secrets at rest, and the `webhooks.secretKeys`
 * configuration it is read from: no I/O.
 */
const k1 = randomBytes(32);
const k2 = randomBytes(32);
const ring = (...keys: [string, Buffer][]) =>
  new WebhookSecretKeyring(
    keys.map(([id, key]) => ({ id, key })),
    { plaintextAllowed: false },
  );

function thrown(run: () => unknown): TenorError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(TenorError);
    return error as TenorError;
  }
  throw new Error("expected a TenorError");
}

describe("WebhookSecretKeyring", () => {
  it("seals with the first key under a fresh nonce, bound to the subscription, and opens it again", () => {
    const keyring = ring(["k1", k1]);
    const id = randomUUID();
    const secret = newWebhookSecret();
    const sealed = keyring.seal(id, secret);
    expect(sealed.keyId).toBe("k1");
    expect(sealed.sealed).not.toContain(secret.slice("whsec_".length));
    expect(keyring.seal(id, secret).sealed).not.toBe(sealed.sealed);
    expect(keyring.open(id, sealed)).toBe(secret);
    // Copied onto another subscription's row, it does not open.
    expect(thrown(() => keyring.open(randomUUID(), sealed)).code).toBe("WEBHOOK_SECRET_UNREADABLE");
    // A row written before encryption (no key id) is plaintext and opens as is.
    expect(keyring.open(id, { keyId: null, sealed: secret })).toBe(secret);
  });

  it("rotates: the new first key seals, the old one still opens what it sealed", () => {
    const id = randomUUID();
    const secret = newWebhookSecret();
    const old = ring(["k1", k1]).seal(id, secret);
    const rotated = ring(["k2", k2], ["k1", k1]);
    expect(rotated.open(id, old)).toBe(secret);
    expect(rotated.seal(id, secret).keyId).toBe("k2");
  });

  it("names the key id when it is missing or holds another key", () => {
    const id = randomUUID();
    const sealed = ring(["k1", k1]).seal(id, newWebhookSecret());
    const missing = thrown(() => ring(["k2", k2]).open(id, sealed));
    expect(missing.code).toBe("WEBHOOK_SECRET_KEY_MISSING");
    expect(missing.message).toContain(
      'webhooks.secretKeys id "k1", which is not configured here (configured: k2)',
    );
    const wrong = thrown(() => ring(["k1", k2]).open(id, sealed));
    expect(wrong.code).toBe("WEBHOOK_SECRET_UNREADABLE");
    expect(wrong.message).toContain('does not decrypt with webhooks.secretKeys id "k1"');
  });

  it("refuses to seal without a key unless plaintext secrets are allowed", () => {
    const refused = thrown(() => ring().seal(randomUUID(), "whsec_x"));
    expect(refused.code).toBe("WEBHOOK_SECRET_KEY_MISSING");
    expect(refused.message).toContain("set webhooks.secretKeys");
    const dev = new WebhookSecretKeyring([], { plaintextAllowed: true });
    expect(dev.seal(randomUUID(), "whsec_x")).toEqual({ keyId: null, sealed: "whsec_x" });
  });

  it("prints its key ids, never the keys", () => {
    const keyring = ring(["k2", k2], ["k1", k1]);
    const shown = [String(keyring), JSON.stringify({ keyring }), inspect(keyring)].join(" ");
    expect(shown).toContain("k2, k1");
    for (const key of [k1, k2]) {
      expect(shown).not.toContain(key.toString("base64"));
      expect(shown).not.toContain(key.toString("hex"));
    }
  });
});

describe("webhooks.secretKeys", () => {
  const settings = (keys: { id: string; env: string }[]) => ({
    secretKeys: keys.map(({ id, env }) => ({ id, key: { env } })),
    plaintextSecrets: false,
  });

  it("reads every key, the first sealing", () => {
    const env = { NEW_KEY: k2.toString("base64"), OLD_KEY: `${k1.toString("base64url")}\n` };
    const keyring = loadWebhookSecretKeyring(
      settings([
        { id: "new", env: "NEW_KEY" },
        { id: "old", env: "OLD_KEY" },
      ]),
      { env },
    );
    expect(keyring.keyIds()).toEqual(["new", "old"]);
    const id = randomUUID();
    const fromOld = ring(["old", k1]).seal(id, "whsec_abc");
    expect(keyring.open(id, fromOld)).toBe("whsec_abc");
  });

  it("refuses a key that is not 32 bytes of base64, naming key, source and shape but never the value", () => {
    const cases: [string, RegExp][] = [
      [randomBytes(16).toString("base64"), /got 24 base64 characters decoding to 16 bytes/],
      ["not base64 at all!", /got 18 characters that are not base64/],
    ];
    for (const [value, shape] of cases) {
      let error: unknown;
      try {
        loadWebhookSecretKeyring(settings([{ id: "k1", env: "HOOK_KEY" }]), { env: { HOOK_KEY: value } });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConfigError);
      const [issue] = (error as ConfigError).issues;
      expect(issue?.key).toBe("webhooks.secretKeys.0.key");
      expect(issue?.rule).toContain("must be a 256-bit key in base64 (32 bytes");
      expect(issue?.rule).toContain("read from env:HOOK_KEY");
      expect(issue?.rule).toMatch(shape);
      expect((error as Error).message).not.toContain(value);
    }
    expect(() => loadWebhookSecretKeyring(settings([{ id: "k1", env: "UNSET_KEY" }]), { env: {} })).toThrow(
      /webhooks\.secretKeys\.0\.key .*must be set and non-empty \(read from env:UNSET_KEY\)/,
    );
  });

  it("is validated by the configuration schema: shape, id rule and unique ids", () => {
    const load = (yaml: string) =>
      loadConfig({
        env: {
          DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/tenor",
          REDIS_URL: "redis://127.0.0.1:6379",
          TENOR_CONFIG: "/etc/tenor.yaml",
        },
        readFile: () => yaml,
      });
    expect(load("{}").webhooks).toMatchObject({ secretKeys: [], plaintextSecrets: false });
    const issues = (yaml: string) => {
      try {
        load(yaml);
      } catch (error) {
        return (error as ConfigError).issues.map((i) => `${i.key}: ${i.rule}`);
      }
      return [];
    };
    expect(issues('webhooks: { secretKeys: [{ id: "k 1", key: { env: K } }] }')).toEqual([
      "webhooks.secretKeys.0.id: must match [A-Za-z0-9_.-]{1,64}",
    ]);
    expect(issues("webhooks: { secretKeys: [{ id: k1, key: c2VjcmV0 }] }")).toEqual([
      "webhooks.secretKeys.0.key: must be { env: NAME } or { file: /path }",
    ]);
    expect(
      issues("webhooks: { secretKeys: [{ id: k1, key: { env: A } }, { id: k1, key: { env: B } }] }"),
    ).toEqual(["webhooks.secretKeys.1.id: must be unique among webhooks.secretKeys"]);
    expect(issues("webhooks: { secretKeys: c2VjcmV0 }")).toEqual([
      "webhooks.secretKeys: must be a list of { id, key: { env: NAME } | { file: /path } }",
    ]);
    // A literal key written where its source belongs is never echoed back.
    expect(() => load("webhooks: { secretKeys: [{ id: k1, key: c2VjcmV0 }] }")).toThrow(
      /webhooks\.secretKeys\.0\.key = "\[redacted\]"/,
    );
  });
});
