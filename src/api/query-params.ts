import { z } from "zod";

/**
 * Query and path parameters parsed to the range PostgreSQL accepts, so a bad value is a 400 naming
 * the parameter instead of a failed cast (a 500) in the database.
 */

/** A UUID in its canonical 8-4-4-4-12 hexadecimal form (PostgreSQL's `uuid` input). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Text PostgreSQL can store: no NUL character (it refuses U+0000 in `text`), at most `max` characters. */
export function pgText(max = 1000) {
  return z
    .string()
    .min(1)
    .max(max)
    .refine((v) => !v.includes("\u0000"), "must not contain the NUL character");
}

/** Years a `timestamptz` parameter may name: PostgreSQL has no year 0, and ISO 8601 stops at 9999. */
const MIN_MS = Date.parse("0001-01-01T00:00:00.000Z");
const MAX_MS = Date.parse("9999-12-31T23:59:59.999Z");

/**
 * A time as PostgreSQL reads it back: any ISO 8601 string V8 parses, within years 0001–9999,
 * normalised to `toISOString()` so the database receives one unambiguous form. Null when out of range.
 */
export function toPgTimestamp(value: string): string | null {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return null;
  if (ms < MIN_MS || ms > MAX_MS) return null;
  return new Date(ms).toISOString();
}

/** An ISO 8601 date-time with offset, within PostgreSQL's range, normalised (see {@link toPgTimestamp}). */
export const pgTimestamp = z.iso
  .datetime({ offset: true, error: "must be an ISO 8601 date-time" })
  .transform((v, ctx) => {
    const normalised = toPgTimestamp(v);
    if (normalised === null) {
      ctx.addIssue({ code: "custom", message: "must be between years 0001 and 9999" });
      return z.NEVER;
    }
    return normalised;
  });
