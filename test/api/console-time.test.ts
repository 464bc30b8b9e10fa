import { describe, expect, it } from "vitest";
import {
  canonicalTimeZone,
  consoleTime,
  timeCell,
  timeZoneChoices,
} from "../../src/api/console/console-time.js";
import { pageWithoutZone } from "../../src/api/console/console-zone.js";

const INSTANT = "2026-12-01T10:05:17.250Z";

describe("the console's times in the viewer's zone", () => {
  it("writes UTC as before, and another zone's wall clock with its offset", () => {
    expect(consoleTime(INSTANT)).toBe("2026-12-01 10:05:17 UTC");
    expect(consoleTime(INSTANT, "UTC")).toBe("2026-12-01 10:05:17 UTC");
    expect(consoleTime(INSTANT, "Europe/Berlin")).toBe("2026-12-01 11:05:17 UTC+01:00");
    expect(consoleTime(INSTANT, "America/New_York")).toBe("2026-12-01 05:05:17 UTC-05:00");
    expect(consoleTime(INSTANT, "Asia/Kathmandu")).toBe("2026-12-01 15:50:17 UTC+05:45");
    // Summer time: the offset follows the instant, not the zone's winter offset.
    expect(consoleTime("2026-07-01T10:05:17Z", "Europe/Berlin")).toBe("2026-07-01 12:05:17 UTC+02:00");
    // A zone at offset zero still names it, so it is not read as the console's UTC default.
    expect(consoleTime(INSTANT, "Europe/London")).toBe("2026-12-01 10:05:17 UTC+00:00");
    // Across midnight the date is the zone's.
    expect(consoleTime("2026-12-01T23:30:00Z", "Asia/Tokyo")).toBe("2026-12-02 08:30:00 UTC+09:00");
  });

  it("renders every time cell with the exact instant, the zone's clock and how long ago", () => {
    const cell = timeCell(INSTANT, { zone: "Europe/Berlin", now: new Date("2026-12-01T10:08:17.250Z") });
    expect(String(cell)).toBe(
      `<time datetime="${INSTANT}">2026-12-01 11:05:17 UTC+01:00</time> <span class="ago">(3 min ago)</span>`,
    );
    expect(timeCell(null, { zone: "UTC", now: new Date() })).toBeNull();
  });

  it("accepts IANA zone names in their canonical spelling and refuses anything else", () => {
    expect(canonicalTimeZone("UTC")).toBe("UTC");
    expect(canonicalTimeZone("Europe/Berlin")).toBe("Europe/Berlin");
    expect(canonicalTimeZone("europe/berlin")).toBe("Europe/Berlin");
    // Three-part names are IANA zones too (the runtime may name the zone by an alias).
    expect(canonicalTimeZone("America/Argentina/Buenos_Aires")).toMatch(/Buenos_Aires$/);
    for (const bad of [
      "Mars/Olympus",
      "+01:00",
      "UTC+1",
      "",
      "Europe/",
      "../etc",
      "Europe/Berlin ",
      "x".repeat(70),
    ])
      expect(canonicalTimeZone(bad), bad).toBeNull();
  });

  it("offers UTC first, then every zone the runtime knows", () => {
    const zones = timeZoneChoices();
    expect(zones[0]).toBe("UTC");
    expect(zones).toContain("Europe/Berlin");
    expect(new Set(zones).size).toBe(zones.length);
    for (const zone of zones) expect(canonicalTimeZone(zone), zone).not.toBeNull();
  });

  it("sends the picker back only to a console page, without the zone or a notice", () => {
    expect(pageWithoutZone("/console?status=failed&tz=UTC")).toBe("/console?status=failed");
    expect(pageWithoutZone("/console/executions/abc?notice=voted")).toBe("/console/executions/abc");
    expect(pageWithoutZone("/console/runners")).toBe("/console/runners");
    for (const away of [
      "https://evil.example/console",
      "//evil.example/console",
      "/v1/executions",
      "/consoles",
      "/console/../v1",
    ])
      expect(pageWithoutZone(away), away).toBe("/console");
  });
});
