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

/**
 * How long before or after `now` an instant is, in words (`3 min ago`, `in 2 h`). The console runs
 * no scripts, so this is rendered with the page: it is true at `now`, the moment of the render.
 */
export function relativeTime(iso: string, now: Date): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return "";
  const delta = now.getTime() - ms;
  const span = Math.abs(delta);
  if (span < 5_000) return "just now";
  const words =
    span < 60_000
      ? `${Math.floor(span / 1000)} s`
      : span < 3_600_000
        ? `${Math.floor(span / 60_000)} min`
        : span < 172_800_000
          ? `${Math.floor(span / 3_600_000)} h`
          : `${Math.floor(span / 86_400_000)} days`;
  return delta >= 0 ? `${words} ago` : `in ${words}`;
}

/** {@link timeCell} followed by how long ago (or until) it is at `now`, the moment of the render. */
export function timeCellAt(iso: string | null, now: Date): Html | null {
  if (iso === null) return null;
  return html`<time datetime="${iso}">${consoleTime(iso)}</time> <span class="ago">(${relativeTime(iso, now)})</span>`;
}
