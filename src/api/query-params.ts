import { z } from "zod";
import { isStorableText } from "../values/storable.js";

/**
 * Query and path parameters parsed to the range PostgreSQL accepts, so a bad value is a 400 naming
 * the parameter instead of a failed cast (a 500) in the database.
 */

/** A UUID in its canonical 8-4-4-4-12 hexadecimal form (PostgreSQL's `uuid` input). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Text PostgreSQL can store (src/values/storable.ts: no U+0000, no lone surrogate), at most `max`
 * characters.
 */
export function pgText(max = 1000) {
  return z
    .string()
    .min(1)
    .max(max)
    .refine(isStorableText, "must not contain U+0000 or a lone surrogate (PostgreSQL cannot store them)");
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

/** Characters of a refused value a message quotes; a longer one is cut and marked with `…`. */
const QUOTED_MAX = 100;

/** How a refused query value is quoted in a message: `(got "0")`, or the array a repeated parameter gives. */
function got(input: unknown): string {
  const quoted = JSON.stringify(input) ?? String(input);
  return `(got ${quoted.length > QUOTED_MAX ? `${quoted.slice(0, QUOTED_MAX)}…` : quoted})`;
}

/** One query value: Express gives an array when a parameter repeats, which is refused naming it. */
function queryString(rule: string) {
  return z.string({ error: (issue) => `${rule}, given once ${got(issue.input)}` });
}

/**
 * A decimal integer query parameter in `min..max` (both inclusive). The message names the rule and
 * the value, so `?limit=0` answers `must be an integer, 1 ≤ v ≤ 200 (got "0")`.
 */
export function queryInteger(min: number, max: number) {
  const rule = `must be an integer, ${min} ≤ v ≤ ${max}`;
  return queryString(rule).transform((v, ctx) => {
    const n = /^-?\d{1,16}$/.test(v) ? Number(v) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      ctx.addIssue({ code: "custom", message: `${rule} ${got(v)}` });
      return z.NEVER;
    }
    return n;
  });
}

/** A query parameter that must be one of `values`; the message lists them and names the value. */
export function queryEnum<const T extends readonly [string, ...string[]]>(values: T) {
  const rule = `must be one of ${values.join(", ")}`;
  return queryString(rule).transform((v, ctx) => {
    if (!(values as readonly string[]).includes(v)) {
      ctx.addIssue({ code: "custom", message: `${rule} ${got(v)}` });
      return z.NEVER;
    }
    return v as T[number];
  });
}

/** A query parameter matching `pattern`, `rule` saying how in words. */
export function queryPattern(pattern: RegExp, rule: string) {
  return queryString(rule).refine((v) => pattern.test(v), {
    error: (issue) => `${rule} ${got(issue.input)}`,
  });
}

/** Bounds of PostgreSQL's `integer` (int4): every Prisma `Int` column (chain ids among them). */
export const PG_INTEGER = { min: -2_147_483_648, max: 2_147_483_647 } as const;

/**
 * An EIP-155 chain id as a query or path parameter: positive and within the `chain_id integer`
 * columns, so `2147483648` is a 400 naming the parameter, never a failed cast in PostgreSQL.
 */
export const chainIdParameter = queryInteger(1, PG_INTEGER.max).meta({
  description: "EIP-155 chain id.",
  type: "integer",
  minimum: 1,
  maximum: PG_INTEGER.max,
});

/** `limit` of a cursor-paged list: 1–200 items, 50 when absent. */
export const pageLimit = queryInteger(1, 200)
  .optional()
  .transform((v) => v ?? 50)
  .meta({
    description: "Items per page, 1–200; default 50.",
    type: "integer",
    minimum: 1,
    maximum: 200,
    default: 50,
  });

/** `cursor` of a cursor-paged list, given once; {@link pageAfter} (src/api/list-cursor.ts) decodes it. */
export const pageCursor = queryString("must be the nextCursor of a previous page")
  .optional()
  .meta({ description: "`nextCursor` of the previous page." });

/**
 * For `.catchall()` of a query schema: any parameter not in `names` is refused at its own pointer
 * (`query.sort`), naming the value and the parameters the route takes.
 */
export function noOtherParameters(names: readonly string[]) {
  // Not z.never(): zod reads a never catchall as `.strict()`, whose one issue names no field.
  return z.custom<never>(() => false, {
    error: (issue) => `is not a parameter of this route (${names.join(", ")}) ${got(issue.input)}`,
  });
}
