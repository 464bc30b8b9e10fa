import type { Request, Response } from "express";
import { consoleUser } from "./console-auth.js";
import { CONSOLE_PATHS } from "./console-paths.js";
import { timeZoneChoices } from "./console-time.js";
import { consoleClock, pageWithoutZone } from "./console-zone.js";
import { Html, html, layout } from "./html.js";
import { whoOf } from "./list-page.js";

/**
 * `GET /console/time-zone?return=<console page>`: every IANA zone to pick from. The form goes back
 * to the page it came from with `tz` added (a GET, no scripts), which sets the zone and remembers
 * it (src/api/console/console-zone.ts).
 */
export function timeZonePage(req: Request, res: Response): void {
  const clock = consoleClock(res);
  const back = pageWithoutZone(typeof req.query.return === "string" ? req.query.return : CONSOLE_PATHS.home);
  const target = new URL(back, "http://console.invalid");
  const body = html`<section><form method="get" action="${target.pathname}">
${[...target.searchParams].map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<label for="tz">Show times in</label><select id="tz" name="tz">
${timeZoneChoices().map((zone) => html`<option ${zone === clock.zone ? new Html("selected") : null}>${zone}</option>`)}
</select> <button type="submit">Use this zone</button></form>
<p>Times are written in this zone with their offset from UTC and how long ago they are; the console
remembers the choice on this browser. <a href="${back}">Back</a> without changing it.</p></section>`;
  res.type("html").send(
    layout({
      title: "Time zone",
      home: CONSOLE_PATHS.home,
      who: whoOf(consoleUser(res)),
      timeZone: {
        zone: clock.zone,
        change: `${CONSOLE_PATHS.timeZone}?${new URLSearchParams({ return: back })}`,
      },
      body,
    }),
  );
}
