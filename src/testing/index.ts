/**
 * Tenor's test kit for workflow authors (docs/writing-workflows.md, "Testing"): run workflows
 * against real PostgreSQL and Redis in a test, drive them, skip time, and replay recorded
 * histories against new code without a database.
 */
export {
  type Divergence,
  describeReplay,
  type HistoryReplay,
  RecordedHistory,
  replayHistory,
} from "../engine/recorded-history.js";
export { replayHistoryFiles } from "./replay.js";
export { TestClock } from "./test-clock.js";
export { startTestKit, TestKit, type TestKitOptions } from "./test-kit.js";
export type { TestPerson } from "./test-people.js";
export { TestRun, VOTE_REFUSED } from "./test-run.js";
