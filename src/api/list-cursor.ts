import { API_ERRORS } from "./api-error-codes.js";
import { apiError } from "./problem.js";
import { toPgTimestamp, UUID_PATTERN } from "./query-params.js";

/**
 * The keyset cursor of the newest-first lists (`GET /v1/executions`, `GET /v1/assets`, the
 * console): the last item's (createdAt, id), so a page continues strictly after it however many
 * items share its time.
 */

/** How a cursor's time is written (`toISOString()`). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

/** A position in a newest-first list: strictly older than this (createdAt, id). */
export interface ListPosition {
  createdAt: string;
  id: string;
}

/** Opaque list cursor: base64url of the last item's (createdAt, id). */
export function encodeCursor(record: ListPosition): string {
  return Buffer.from(JSON.stringify([record.createdAt, record.id]), "utf8").toString("base64url");
}

/** The position a cursor names, or null when it is not one {@link encodeCursor} wrote. */
export function decodeCursor(cursor: string): ListPosition | null {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (!Array.isArray(value) || value.length !== 2) return null;
    const [createdAt, id] = value;
    // Parsed to what PostgreSQL accepts: a tampered cursor is a 400, never a failed cast.
    const at = typeof createdAt === "string" && ISO_INSTANT.test(createdAt) ? toPgTimestamp(createdAt) : null;
    if (at === null) return null;
    if (typeof id !== "string" || !UUID_PATTERN.test(id)) return null;
    return { createdAt: at, id };
  } catch {
    return null;
  }
}

/**
 * The `cursor` query parameter of a list route: undefined for the first page, the position to
 * continue after, or REQUEST_INVALID (400) naming `query.cursor` when this API did not issue it.
 */
export function pageAfter(cursor: string | undefined): ListPosition | undefined {
  if (cursor === undefined) return undefined;
  const after = decodeCursor(cursor);
  if (after !== null) return after;
  throw apiError(API_ERRORS.REQUEST_INVALID, "the cursor is not one this API issued", {
    errors: [
      {
        pointer: "query.cursor",
        message: `must be the nextCursor of a previous page, unchanged (got ${JSON.stringify(cursor)})`,
      },
    ],
  });
}

/**
 * One page from `rows`, fetched with `limit + 1` so a further page is known without a count: the
 * first `limit` rows and the cursor after the last of them, or null on the last page.
 */
export function pageOf<T extends ListPosition>(
  rows: readonly T[],
  limit: number,
): { page: T[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { page, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
}
