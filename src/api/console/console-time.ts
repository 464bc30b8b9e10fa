import { type Html, html } from "./html.js";

/**
 * How the console writes an instant (docs/console.md, "Times"): in the viewer's chosen IANA zone
 * (UTC unless chosen), to the second, with the offset named (`2026-12-01 10:05:17 UTC`,
 * `2026-12-01 11:05:17 UTC+01:00`), so a time read off the console is never mistaken for another
 * zone's. Bull Board writes the same instant in the browser's zone.
 */

/** The zone a page is rendered in and the moment of the render: the console runs no scripts. */
export interface ConsoleClock {
  /** A canonical IANA zone name (`UTC`, `Europe/Berlin`), as {@link canonicalTimeZone} returns it. */
  zone: string;
  now: Date;
}

export const UTC_CLOCK_ZONE = "UTC";

/** A zone name is an IANA area/location (or `UTC`), never an offset or a long string. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/;
const ZONE_NAME_MAX = 64;

/**
 * The canonical IANA name of `name` (`europe/berlin` → `Europe/Berlin`, `US/Eastern` →
 * `America/New_York`), or null when it names no zone this runtime knows.
 */
export function canonicalTimeZone(name: string): string | null {
  if (name.length > ZONE_NAME_MAX || !ZONE_NAME.test(name)) return null;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** Every zone a viewer may pick: UTC first, then the runtime's IANA zones. */
export function timeZoneChoices(): string[] {
  return [UTC_CLOCK_ZONE, ...Intl.supportedValuesOf("timeZone").filter((z) => z !== UTC_CLOCK_ZONE)];
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
      timeZoneName: "longOffset",
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** `iso` in `zone`: `2026-12-01 10:05:17 UTC`, or `2026-12-01 11:05:17 UTC+01:00` in another zone. */
export function consoleTime(iso: string, zone: string = UTC_CLOCK_ZONE): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  if (zone === UTC_CLOCK_ZONE) return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
  const part = Object.fromEntries(
    formatterOf(zone)
      .formatToParts(ms)
      .map((p) => [p.type, p.value]),
  );
  // longOffset writes `GMT+01:00`, and a bare `GMT` at offset zero.
  const offset = part.timeZoneName === "GMT" ? "+00:00" : String(part.timeZoneName).replace("GMT", "");
  return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute}:${part.second} UTC${offset}`;
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

/**
 * An instant as every console page shows it: in the viewer's zone inside a `<time>` carrying the
 * exact ISO 8601 value, then how long ago (or until) it is at the render.
 */
export function timeCell(iso: string | null, clock: ConsoleClock): Html | null {
  if (iso === null) return null;
  return html`<time datetime="${iso}">${consoleTime(iso, clock.zone)}</time> <span class="ago">(${relativeTime(iso, clock.now)})</span>`;
}
