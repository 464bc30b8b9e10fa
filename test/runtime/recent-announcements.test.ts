import { describe, expect, it } from "vitest";
import { RecentAnnouncements } from "../../src/runtime/recent-announcements.js";

/** The listener's memory of recent announcements stays within its bounds and says when it forgot. */
describe("RecentAnnouncements", () => {
  it("keeps at most `capacity` ids, forgetting the oldest, and no longer vouches for their time", () => {
    let now = 1_000;
    const recent = new RecentAnnouncements({ capacity: 100, ttlMs: 60_000, now: () => now });
    for (let i = 0; i < 250; i += 1) {
      recent.add(`id-${i}`);
      now += 1;
    }
    expect(recent.size).toBe(100);
    expect(recent.has("id-149")).toBe(false);
    expect(recent.has("id-150")).toBe(true);
    expect(recent.has("id-249")).toBe(true);
    // id-149 was received at 1,149 and forgotten: nothing from then on may be assumed unheard.
    expect(recent.keepsSince(1_149)).toBe(false);
    expect(recent.keepsSince(1_150)).toBe(true);
  });

  it("forgets ids older than `ttlMs` even while under capacity", () => {
    let now = 5_000;
    const recent = new RecentAnnouncements({ capacity: 100, ttlMs: 30_000, now: () => now });
    recent.add("old");
    now += 10_000;
    recent.add("newer");
    expect(recent.keepsSince(4_000)).toBe(true);
    now = 5_000 + 30_000;
    expect(recent.has("old")).toBe(false);
    expect(recent.has("newer")).toBe(true);
    expect(recent.size).toBe(1);
    expect(recent.keepsSince(5_000)).toBe(false);
    expect(recent.keepsSince(5_001)).toBe(true);
  });

  it("moves an id announced again to the newest place", () => {
    let now = 0;
    const recent = new RecentAnnouncements({ capacity: 2, now: () => now });
    recent.add("a");
    now += 1;
    recent.add("b");
    now += 1;
    recent.add("a");
    now += 1;
    recent.add("c");
    expect(recent.has("a")).toBe(true);
    expect(recent.has("b")).toBe(false);
    expect(recent.size).toBe(2);
  });

  it("refuses bounds that would keep nothing", () => {
    expect(() => new RecentAnnouncements({ capacity: 0 })).toThrow(RangeError);
    expect(() => new RecentAnnouncements({ ttlMs: 0 })).toThrow(RangeError);
  });
});
