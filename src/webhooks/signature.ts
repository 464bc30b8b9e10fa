import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { TenorError } from "../errors/tenor-error.js";
import { WEBHOOK_ERRORS } from "../errors/webhook-errors.js";

/** A new signing secret: `whsec_` and 32 random bytes (base64url). The logger redacts the pattern. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

/** `hex(HMAC-SHA256(secret, "<t>.<raw body>"))`: the `v1` value of a signature. */
export function webhookSignatureV1(secret: string, timestampSeconds: number, rawBody: string): string {
  return createHmac("sha256", secret).update(`${timestampSeconds}.${rawBody}`).digest("hex");
}

/** The `Tenor-Signature` header value: `t=<unix seconds>,v1=<hex>`. */
export function webhookSignatureHeader(secret: string, timestampSeconds: number, rawBody: string): string {
  return `t=${timestampSeconds},v1=${webhookSignatureV1(secret, timestampSeconds, rawBody)}`;
}

export interface VerifyWebhookOptions {
  secret: string;
  /** The `Tenor-Signature` header as received. */
  header: string | undefined;
  /** The request body exactly as received (before any JSON parsing). */
  rawBody: string;
  /** Oldest accepted timestamp, in seconds before `nowSeconds` (`webhooks.replayWindowSeconds`, default 300). */
  toleranceSeconds: number;
  nowSeconds: number;
}

/**
 * Verifies a delivery as a receiver should (docs/webhooks.md, "Verifying a delivery"): the header
 * parses, its timestamp lies within the tolerance (in either direction), and one of its `v1`
 * values equals the HMAC of `"<t>.<raw body>"`, compared in constant time. Throws
 * WEBHOOK_SIGNATURE_INVALID naming what failed; returns the signed timestamp.
 */
export function verifyWebhookSignature(options: VerifyWebhookOptions): number {
  const refuse = (reason: string) =>
    new TenorError(WEBHOOK_ERRORS.WEBHOOK_SIGNATURE_INVALID, `Tenor-Signature ${reason}`);
  if (!options.header) throw refuse("is missing");
  const parts = options.header.split(",").map((p) => p.trim().split("="));
  const t = Number(parts.find(([k]) => k === "t")?.[1]);
  const signatures = parts.filter(([k, v]) => k === "v1" && v).map(([, v]) => v as string);
  if (!Number.isInteger(t) || signatures.length === 0) throw refuse("must be t=<unix seconds>,v1=<hex>");
  if (Math.abs(options.nowSeconds - t) > options.toleranceSeconds)
    throw refuse(`timestamp ${t} is outside the ${options.toleranceSeconds} s replay window`);
  const expected = Buffer.from(webhookSignatureV1(options.secret, t, options.rawBody), "hex");
  const matches = signatures.some((hex) => {
    const given = Buffer.from(hex, "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw refuse("does not match the body");
  return t;
}
