/**
 * Redaction of secrets from anything Tenor writes out: log lines (the logger applies it to every
 * line, so no call site can bypass it) and configuration errors. What counts as a secret:
 *  - a URL's password (`postgres://svc:S3cret@db` → `postgres://svc:[redacted]@db`),
 *  - an `Authorization`-style credential (`Bearer <x>`, `Basic <x>`),
 *  - a Tenor API key (`tnr_<base64url>`, see src/api/auth/api-key.ts),
 *  - a webhook signing secret (`whsec_<base64url>`, see src/webhooks/signature.ts),
 *  - the value of any field whose name looks like a secret (password, token, connectionString, ...).
 */

export const REDACTED = "[redacted]";

/**
 * Field names whose values are never written out, whatever they hold. A bare `token` is not one:
 * in this domain it usually names an asset (its address or symbol), not a credential.
 */
export const SECRET_FIELD =
  /passw|pwd|secret|(access|refresh|auth|bearer|session|csrf|id)[-_]?token|api[-_]?key|private[-_]?key|mnemonic|seed[-_]?phrase|authori[sz]ation|cookie|credential|connection[-_]?string/i;

const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)([^\s@/]+)@/gi;
const AUTH_SCHEME = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;
const API_KEY = /\btnr_[A-Za-z0-9_-]{8,}/g;
const WEBHOOK_SECRET = /\bwhsec_[A-Za-z0-9_-]{8,}/g;

/** A string with URL passwords, Authorization credentials, API keys and webhook secrets replaced by "[redacted]". */
export function redactText(text: string): string {
  return text
    .replace(URL_PASSWORD, `$1${REDACTED}@`)
    .replace(AUTH_SCHEME, `$1 ${REDACTED}`)
    .replace(API_KEY, `tnr_${REDACTED}`)
    .replace(WEBHOOK_SECRET, `whsec_${REDACTED}`);
}

const MAX_DEPTH = 8;

/**
 * A copy of `value` safe to write out: strings pass through {@link redactText}, secret-named fields
 * become "[redacted]", errors keep name, message, code and stack, and instances of other classes
 * (pools, sockets, clients) become `[ClassName]` instead of dumping their internals. Cycles and
 * nesting deeper than 8 levels are cut.
 */
export function redactValue(value: unknown, depth = 0, seen: WeakSet<object> = new WeakSet()): unknown {
  if (typeof value === "string") return redactText(value);
  if (value === null || typeof value !== "object") return value;
  if (value instanceof Date) return value;
  if (seen.has(value)) return "[cycle]";
  if (depth >= MAX_DEPTH) return "[too deep]";
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1, seen));
    if (value instanceof Error) {
      const code = (value as { code?: unknown }).code;
      return {
        name: value.name,
        message: redactText(value.message),
        ...(code !== undefined ? { code: redactValue(code, depth + 1, seen) } : {}),
        ...(value.stack ? { stack: redactText(value.stack) } : {}),
      };
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return `[${value.constructor?.name ?? "object"}]`;
    return redactFields(value as Record<string, unknown>, depth, seen);
  } finally {
    seen.delete(value);
  }
}

function redactFields(record: Record<string, unknown>, depth: number, seen: WeakSet<object>) {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(record)) {
    out[key] = SECRET_FIELD.test(key) ? REDACTED : redactValue(field, depth + 1, seen);
  }
  return out;
}
