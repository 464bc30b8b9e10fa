import { historyFiles, type ReplayFinding, replayFiles } from "../cli/replay-command.js";
import type { AnyWorkflow } from "../engine/workflow.js";

/**
 * Replays every recorded history (`*.json`) under `paths` against `workflows` (the code under
 * test), without a database, as `tenor replay` does; returns one finding per file. A test asserts
 * that none diverged: `expect(findings.filter((f) => !f.replay.ok)).toEqual([])`.
 *
 * @param options.timeoutMs - how long one body may take, in ms (default 5000).
 */
export async function replayHistoryFiles(
  paths: readonly string[],
  workflows: readonly AnyWorkflow[],
  options: { timeoutMs?: number } = {},
): Promise<ReplayFinding[]> {
  return replayFiles(await historyFiles(paths), workflows, options);
}
