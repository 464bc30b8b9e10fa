import { SCHEDULE_NAMES, type ScheduleDefinition } from "./schedule-definition.js";

/**
 * The blockchain health collector's schedule. A stub until chains are configured (the chain
 * issues fill it): each tick records a run with outcome `empty` and the note "no chains
 * configured", so an operator sees it is alive and has nothing to collect, rather than stopped.
 *
 * @param intervalSeconds - `monitoring.blockchainHealthCollector.intervalSeconds`: whole minutes at
 *   or above 60, a divisor of 60 below it (validated in src/config), so windows align to minutes.
 */
export function blockchainHealthSchedule(intervalSeconds: number): ScheduleDefinition {
  return {
    name: SCHEDULE_NAMES.blockchainHealth,
    cadence: { kind: "every", everyMs: intervalSeconds * 1_000 },
    async run() {
      return { outcome: "empty", summary: { chains: 0, note: "no chains configured" } };
    },
  };
}
