/**
 * `Prefer: wait=N` (RFC 7240 §4.3): the client would rather wait up to N seconds for the final
 * result than poll. Preferences are comma-separated `token[=value]` pairs, case-insensitive
 * tokens, optionally quoted values; unknown ones are ignored, as the RFC asks.
 */
export interface WaitPreference {
  /** Seconds asked for. */
  requested: number;
  /** Seconds granted: `requested` capped by `api.maxPreferWaitSeconds`. */
  applied: number;
}

/** The wait preference of a `Prefer` header (or its repeated values), or null when there is none. */
export function parsePreferWait(
  header: string | string[] | undefined,
  maxSeconds: number,
): WaitPreference | null {
  if (header === undefined) return null;
  const text = Array.isArray(header) ? header.join(",") : header;
  for (const preference of text.split(",")) {
    // Parameters after ";" belong to the preference; wait takes none we use.
    const [head = ""] = preference.split(";");
    const match = /^\s*wait\s*=\s*"?(\d{1,9})"?\s*$/i.exec(head);
    if (!match) continue;
    const requested = Number(match[1]);
    return { requested, applied: Math.min(requested, maxSeconds) };
  }
  return null;
}
