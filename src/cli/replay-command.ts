import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import {
  describeReplay,
  type HistoryReplay,
  RecordedHistory,
  replayHistory,
} from "../engine/recorded-history.js";
import { WorkflowRegistry } from "../engine/registry.js";
import type { AnyWorkflow } from "../engine/workflow.js";
import { type CommandIo, EXIT, UsageError } from "./cli-io.js";
import { loadWorkflowModule } from "./compat-command.js";

/** One history file and how its replay ended. */
export interface ReplayFinding {
  file: string;
  history: RecordedHistory;
  replay: HistoryReplay;
}

/** Every `*.json` under the named files and directories, sorted, directories walked recursively. */
export async function historyFiles(targets: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const target of targets) {
    const info = await stat(target).catch(() => null);
    if (!info) throw new UsageError(`${JSON.stringify(target)} does not exist`);
    if (!info.isDirectory()) {
      files.push(target);
      continue;
    }
    const entries = await readdir(target, { recursive: true });
    files.push(
      ...entries
        .filter((entry) => entry.endsWith(".json"))
        .sort()
        .map((entry) => path.join(target, entry)),
    );
  }
  return files;
}

/** Reads and checks one history file; a file that is not one is a usage error naming it. */
export async function readHistoryFile(file: string): Promise<RecordedHistory> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new UsageError(`${file} is not JSON: ${(error as Error).message}`);
  }
  const history = RecordedHistory.safeParse(parsed);
  if (!history.success) {
    throw new UsageError(
      `${file} is not a recorded history (tenor runs history <id>): ${z.prettifyError(history.error)}`,
    );
  }
  return history.data;
}

/** Replays each history file against `workflows`, in order. */
export async function replayFiles(
  files: readonly string[],
  workflows: readonly AnyWorkflow[],
  options: { timeoutMs?: number } = {},
): Promise<ReplayFinding[]> {
  const registry = new WorkflowRegistry(workflows);
  const findings: ReplayFinding[] = [];
  for (const file of files) {
    const history = await readHistoryFile(file);
    findings.push({ file, history, replay: await replayHistory(history, registry, options) });
  }
  return findings;
}

/** `tenor replay <file or directory>...`; exit 1 when any history diverges. */
export async function runReplayCommand(
  args: readonly string[],
  io: CommandIo,
  workflows: () => Promise<readonly AnyWorkflow[]>,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: { against: { type: "string" }, json: { type: "boolean" }, "timeout-ms": { type: "string" } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length === 0) throw new UsageError("name a history file or a directory of them");
  const timeoutMs = values["timeout-ms"] === undefined ? undefined : Number(values["timeout-ms"]);
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0)) {
    throw new UsageError("--timeout-ms must be a positive integer");
  }
  const files = await historyFiles(positionals);
  if (files.length === 0) throw new UsageError(`no *.json history in ${positionals.join(", ")}`);
  const code = values.against ? await loadWorkflowModule(values.against) : await workflows();
  const findings = await replayFiles(files, code, timeoutMs === undefined ? {} : { timeoutMs });
  const diverged = findings.filter((f) => !f.replay.ok);
  if (values.json) {
    io.stdout(
      `${JSON.stringify(
        findings.map((f) => ({ file: f.file, ...f.replay })),
        null,
        2,
      )}\n`,
    );
  } else {
    for (const f of findings) io.stdout(`${describeReplay(f.history, f.replay)}  (${f.file})\n`);
    io.stdout(`${findings.length} replayed, ${diverged.length} diverged\n`);
  }
  return diverged.length > 0 ? EXIT.FAILED : EXIT.OK;
}
