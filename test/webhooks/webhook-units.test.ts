import { describe, expect, it } from "vitest";
import type { ConfigError } from "../../src/config/config-error.js";
import { loadConfig } from "../../src/config/load-config.js";
import { redactText } from "../../src/errors/redact.js";
import { isInternalAddress, urlRefusal } from "../../src/webhooks/address-policy.js";
import { webhookRetryDelayMs } from "../../src/webhooks/backoff.js";
import {
  newWebhookSecret,
  verifyWebhookSignature,
  webhookSignatureHeader,
} from "../../src/webhooks/signature.js";

const secret = "whsec_test-secret-value";
const body = '{"id": "e1", "type": "execution.completed"}';

describe("webhook signature", () => {
  it("signs t.<raw body> with HMAC-SHA256 and verifies within the replay window only", () => {
    const header = webhookSignatureHeader(secret, 1_700_000_000, body);
    expect(header).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
    const verify = (overrides: Partial<Parameters<typeof verifyWebhookSignature>[0]>) =>
      verifyWebhookSignature({
        secret,
        header,
        rawBody: body,
        toleranceSeconds: 300,
        nowSeconds: 1_700_000_100,
        ...overrides,
      });
    expect(verify({})).toBe(1_700_000_000);
    expect(() => verify({ nowSeconds: 1_700_000_301 })).toThrow(/outside the 300 s replay window/);
    expect(() => verify({ rawBody: body.replace("e1", "e2") })).toThrow(/does not match/);
    expect(() => verify({ secret: "whsec_other" })).toThrow(/does not match/);
    expect(() => verify({ header: undefined })).toThrow(/missing/);
    expect(() => verify({ header: "v1=abc" })).toThrow(/t=<unix seconds>/);
    // A replayed body under a fresh timestamp needs the secret to re-sign: the old v1 fails.
    expect(() => verify({ header: header.replace("t=1700000000", "t=1700000090") })).toThrow(
      /does not match/,
    );
    try {
      verify({ header: "nonsense" });
    } catch (error) {
      expect((error as { code: string }).code).toBe("WEBHOOK_SIGNATURE_INVALID");
    }
  });

  it("makes secrets the logger redacts", () => {
    const fresh = newWebhookSecret();
    expect(fresh).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(redactText(`created with ${fresh}`)).toBe("created with whsec_[redacted]");
  });
});

describe("webhook addresses", () => {
  it("classifies internal addresses, IPv4-mapped IPv6 included", () => {
    for (const a of [
      "127.0.0.1",
      "10.0.0.1",
      "172.16.5.4",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "::",
      "fd00::1",
      "fe80::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:0:7f00:1",
      "::127.0.0.1",
      "64:ff9b::a9fe:a9fe",
      "64:ff9b:1::808:808",
      "2002:a00:1::",
      "2001:db8::1",
      "2001:0:4136:e378:8000:63bf:3fff:fdd2",
      "fe80::1%eth0",
      "1::2::3",
    ])
      expect(isInternalAddress(a), a).toBe(true);
    for (const a of [
      "93.184.216.34",
      "8.8.8.8",
      "2606:4700::1111",
      "::ffff:8.8.8.8",
      "64:ff9b::808:808",
      "2002:808:808::1",
    ])
      expect(isInternalAddress(a), a).toBe(false);
  });

  it("refuses non-http(s), credentials and internal literals unless allowed", () => {
    expect(urlRefusal("https://hooks.example.com/x", false)).toBeNull();
    expect(urlRefusal("file:///etc/passwd", false)).toMatch(/http or https/);
    expect(urlRefusal("http://[::1]:8080/", false)).toMatch(/internal address/);
    expect(urlRefusal("http://localhost/", false)).toMatch(/localhost/);
    expect(urlRefusal("http://LOCALHOST./", false)).toMatch(/localhost/);
    expect(urlRefusal("http://127.0.0.1/", true)).toBeNull();
    expect(urlRefusal("gopher://127.0.0.1/", true)).toMatch(/http or https/);
  });
});

describe("webhook backoff and configuration", () => {
  it("draws a full-jitter delay under an exponential ceiling capped at maxMs", () => {
    const backoff = { baseMs: 1_000, maxMs: 10_000 };
    expect(webhookRetryDelayMs(1, backoff, () => 0.999)).toBe(999);
    expect(webhookRetryDelayMs(3, backoff, () => 0.5)).toBe(2_000);
    expect(webhookRetryDelayMs(10, backoff, () => 0.5)).toBe(5_000);
    expect(webhookRetryDelayMs(60, backoff, () => 0.999)).toBeLessThan(10_000);
    expect(webhookRetryDelayMs(2, backoff, () => 0)).toBe(0);
  });

  it("validates webhooks.* with errors naming key, value and rule", () => {
    const load = (webhooks: unknown) =>
      loadConfig({
        env: { DATABASE_URL: "postgres://db/x", REDIS_URL: "redis://r", TENOR_CONFIG: "f" },
        readFile: () => JSON.stringify({ webhooks }),
      });
    expect(load({}).webhooks).toMatchObject({
      timeoutMs: 10_000,
      maxAttempts: 8,
      replayWindowSeconds: 300,
      allowPrivateAddresses: false,
    });
    const issues = (() => {
      try {
        load({
          timeoutMs: 50,
          maxAttempts: 0,
          backoff: { baseMs: 5_000, maxMs: 1_000 },
          concurrency: 1.5,
          colour: "red",
        });
      } catch (error) {
        return (error as ConfigError).issues;
      }
      return [];
    })();
    expect(issues).toEqual(
      expect.arrayContaining([
        { key: "webhooks.timeoutMs", value: 50, rule: "100 ≤ v ≤ 60000" },
        { key: "webhooks.maxAttempts", value: 0, rule: "1 ≤ v ≤ 50" },
        { key: "webhooks.backoff.maxMs", value: 1_000, rule: "must be ≥ webhooks.backoff.baseMs (5000)" },
        { key: "webhooks.concurrency", value: 1.5, rule: "must be an integer" },
        { key: "webhooks.colour", value: "red", rule: "is not a known configuration key" },
      ]),
    );
  });
});
