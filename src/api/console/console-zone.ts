import type { NextFunction, Request, Response } from "express";
import { overTls } from "../admin/board-session.js";
import { API_ERRORS } from "../api-error-codes.js";
import { CONSOLE_PATHS } from "./console-paths.js";
import { type ConsoleClock, canonicalTimeZone, UTC_CLOCK_ZONE } from "./console-time.js";
import { html, layout } from "./html.js";

/**
 * The viewer's time zone (docs/console.md, "Times"). The console runs no scripts, so it cannot
 * read the browser's zone: the viewer names one with `?tz=<IANA zone>` on any console page (the
 * "change" link in the header leads to a picker), and it is remembered in a cookie for the
 * console's other pages. Without either, times are in UTC.
 */

export const CONSOLE_ZONE_COOKIE = "tenor_console_tz";
/** A preference, not a credential: it lasts a year. */
const ZONE_COOKIE_MAX_AGE_SECONDS = 365 * 24 * 3600;

/**
 * Reads `?tz=` (refused with 400 REQUEST_INVALID when it names no IANA zone) or the cookie (an
 * unknown zone there is ignored: the runtime may have dropped it) and keeps the zone for the page.
 */
export function consoleTimeZone(req: Request, res: Response, next: NextFunction): void {
  const asked = req.query.tz;
  if (asked !== undefined) {
    const zone = typeof asked === "string" ? canonicalTimeZone(asked) : null;
    if (zone === null) {
      refuseZone(req, res, asked);
      return;
    }
    res.append("Set-Cookie", zoneCookie(req, zone));
    res.locals.consoleZone = zone;
  } else {
    const cookie = zoneCookieValue(req);
    res.locals.consoleZone = (cookie === null ? null : canonicalTimeZone(cookie)) ?? UTC_CLOCK_ZONE;
  }
  next();
}

/** The zone this page is rendered in and the moment of the render. */
export function consoleClock(res: Response): ConsoleClock {
  const zone = res.locals.consoleZone;
  return { zone: typeof zone === "string" ? zone : UTC_CLOCK_ZONE, now: new Date() };
}

/** The header's "Times in <zone> (change)": the picker returns to the page it was opened from. */
export function zoneHeader(res: Response): { zone: string; change: string } {
  const back = pageWithoutZone(res.req.originalUrl);
  return {
    zone: consoleClock(res).zone,
    change: `${CONSOLE_PATHS.timeZone}?${new URLSearchParams({ return: back })}`,
  };
}

/**
 * The console page `url` names without its `tz` and `notice` (a notice is said once), or the
 * console's home when `url` is not a console page: the picker never sends anyone elsewhere.
 */
export function pageWithoutZone(url: string): string {
  const parsed = new URL(url, "http://console.invalid");
  const inConsole =
    parsed.origin === "http://console.invalid" &&
    (parsed.pathname === CONSOLE_PATHS.home || parsed.pathname.startsWith(`${CONSOLE_PATHS.home}/`));
  if (!inConsole) return CONSOLE_PATHS.home;
  parsed.searchParams.delete("tz");
  parsed.searchParams.delete("notice");
  const query = parsed.searchParams.toString();
  return query === "" ? parsed.pathname : `${parsed.pathname}?${query}`;
}

function zoneCookie(req: Request, zone: string): string {
  const attributes = [
    `${CONSOLE_ZONE_COOKIE}=${encodeURIComponent(zone)}`,
    `Path=${CONSOLE_PATHS.home}`,
    "HttpOnly",
    "SameSite=Strict",
    `Max-Age=${ZONE_COOKIE_MAX_AGE_SECONDS}`,
  ];
  if (overTls(req)) attributes.push("Secure");
  return attributes.join("; ");
}

function zoneCookieValue(req: Request): string | null {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq >= 0 && part.slice(0, eq).trim() === CONSOLE_ZONE_COOKIE) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return null;
      }
    }
  }
  return null;
}

function refuseZone(req: Request, res: Response, asked: unknown): void {
  res.locals.problemCode = API_ERRORS.REQUEST_INVALID;
  const shown = typeof asked === "string" ? JSON.stringify(asked.slice(0, 80)) : "a list";
  res
    .status(400)
    .type("html")
    .send(
      layout({
        title: "Unknown time zone",
        home: CONSOLE_PATHS.home,
        body: html`<section class="alert" role="alert"><strong>${API_ERRORS.REQUEST_INVALID}</strong>:
query.tz: ${shown} is not an IANA time zone; name one such as <code>Europe/Berlin</code>,
<code>America/New_York</code> or <code>UTC</code>.</section>
<p><a href="${`${CONSOLE_PATHS.timeZone}?${new URLSearchParams({ return: pageWithoutZone(req.originalUrl) })}`}">Pick a time zone</a></p>`,
      }),
    );
}
