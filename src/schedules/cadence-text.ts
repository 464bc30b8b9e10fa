import { getNextMillis, type RepeatOptions } from "bullmq";
import { z } from "zod";
import type { ScheduleCadence } from "./schedule-definition.js";

/**
 * A schedule's cadence as `schedules.cadence` stores it: what the runner that registered the
 * definition last wrote. Anything else (a row of a release before the column) reads as null.
 */
const StoredCadenceSchema = z.union([
  z.object({ kind: z.literal("every"), everyMs: z.number().int().positive() }),
  z.object({
    kind: z.literal("cron"),
    pattern: z.string().min(1),
    tz: z.string().min(1),
    periodMs: z.number().int().positive(),
  }),
]);

/** The stored cadence, or null when the row has none or one this release cannot read. */
export function parseStoredCadence(value: unknown): ScheduleCadence | null {
  const parsed = StoredCadenceSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/**
 * The BullMQ job scheduler's repeat options of a cadence: `every` in milliseconds, or the cron
 * `pattern` in `tz`. The upsert and the next-run computation share it, so both agree.
 */
export function repeatOptionsOf(cadence: ScheduleCadence): Omit<RepeatOptions, "key"> {
  return cadence.kind === "every" ? { every: cadence.everyMs } : { pattern: cadence.pattern, tz: cadence.tz };
}

/**
 * When the job scheduler of `cadence` would next fire after `now` (ms since the epoch), by
 * BullMQ's own computation; null when it has none (a pattern that never fires again).
 */
export function nextRunFromCadence(cadence: ScheduleCadence, now: number): number | null {
  return getNextMillis(now, repeatOptionsOf(cadence)) ?? null;
}

const UNITS = [
  { ms: 86_400_000, one: "daily", many: "days" },
  { ms: 3_600_000, one: "hourly", many: "hours" },
  { ms: 60_000, one: "every minute", many: "minutes" },
  { ms: 1_000, one: "every second", many: "seconds" },
] as const;

/**
 * A cadence for people: `every 5 minutes`, `hourly`, `daily at 03:17 UTC`, `every 250 ms`. A cron
 * pattern other than a daily or hourly one is shown as it is, with its time zone.
 */
export function describeCadence(cadence: ScheduleCadence): string {
  if (cadence.kind === "every") return describeEvery(cadence.everyMs);
  const [minute, hour, dayOfMonth, month, dayOfWeek, ...extra] = cadence.pattern.trim().split(/\s+/);
  const number = /^\d{1,2}$/;
  const everyDay = dayOfMonth === "*" && month === "*" && dayOfWeek === "*" && extra.length === 0;
  if (everyDay && minute !== undefined && number.test(minute)) {
    const mm = minute.padStart(2, "0");
    if (hour !== undefined && number.test(hour))
      return `daily at ${hour.padStart(2, "0")}:${mm} ${cadence.tz}`;
    if (hour === "*") return `hourly at :${mm} ${cadence.tz}`;
  }
  return `cron "${cadence.pattern}" (${cadence.tz})`;
}

/** An interval in the largest whole unit: `every 5 seconds`, `hourly`, `every 2 days`. */
export function describeEvery(everyMs: number): string {
  for (const unit of UNITS) {
    if (everyMs % unit.ms !== 0) continue;
    const count = everyMs / unit.ms;
    return count === 1 ? unit.one : `every ${count} ${unit.many}`;
  }
  return `every ${everyMs} ms`;
}
