import { type Html, html } from "./html.js";

/**
 * How the console writes an instant: in UTC, to the second, with the zone named
 * (`2026-12-01 10:05:17 UTC`), so a time read off the console is never mistaken for local time.
 * Bull Board writes the same instant in the browser's zone (docs/console.md, "Times").
 */
export function consoleTime(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** {@link consoleTime} in a `<time>` element carrying the exact instant (ISO 8601, milliseconds). */
export function timeCell(iso: string | null): Html | null {
  return iso === null ? null : html`<time datetime="${iso}">${consoleTime(iso)}</time>`;
}
