import { z } from "zod";
import { canonicalJson } from "./canonical-json.js";
import { type DryReplayOutcome, dryReplay, type JournalCall } from "./dry-replay.js";
import { ENGINE_ERRORS } from "./error-codes.js";
import type { JournalEntry } from "./execution-store.js";
import type { WorkflowRegistry } from "./registry.js";

/**
 * A recorded history: one execution's journal with what a replay needs to run it again (workflow
 * name and version, input, how it ended). Exported by `GET /v1/executions/{id}/history` and
 * `tenor runs history <id>`, replayed against new code by `tenor replay <file>` and the test kit's
 * `replayHistory` (docs/writing-workflows.md, "Changing a workflow that has runs in flight").
 */
export const HISTORY_FORMAT = "tenor.history/1";

const JournalEntrySchema = z.object({
  position: z.number().int().nonnegative(),
  kind: z.enum(["step", "sleep", "signal", "child", "condition", "now", "uuid", "random"]),
  name: z.string(),
  state: z.enum(["pending", "ok", "error", "cancelled"]),
  result: z.unknown(),
  error: z
    .object({
      code: z.string(),
      message: z.string(),
      retryable: z.boolean(),
      details: z.record(z.string(), z.unknown()),
      name: z.string().optional(),
    })
    .nullable(),
  attempts: z.number().int(),
  seq: z.number().int().nullable(),
  cause: z.number().int().nullable(),
});

export const RecordedHistory = z.object({
  format: z.literal(HISTORY_FORMAT),
  execution: z.object({
    id: z.string(),
    orgId: z.string(),
    workflow: z.string(),
    workflowVersion: z.number().int().positive(),
    status: z.enum(["running", "waiting", "suspended", "completed", "failed"]),
    input: z.unknown(),
    output: z.unknown(),
    failure: z.object({ code: z.string(), message: z.string() }).loose().nullable(),
  }),
  /** When the history was exported (ISO 8601). */
  exportedAt: z.string(),
  journal: z.array(JournalEntrySchema),
});
export type RecordedHistory = z.infer<typeof RecordedHistory>;

/** What a history records of its execution, as the store and the API read it. */
export interface HistorySource {
  id: string;
  orgId: string;
  workflow: string;
  workflowVersion: number;
  status: RecordedHistory["execution"]["status"];
  input: unknown;
  output: unknown;
  failure: { code: string; message: string } | null;
  journal: readonly JournalEntry[];
}

/** The history file of one execution: journal entries only (no timestamps, no projection). */
export function recordHistory(source: HistorySource, exportedAt: Date): RecordedHistory {
  return {
    format: HISTORY_FORMAT,
    execution: {
      id: source.id,
      orgId: source.orgId,
      workflow: source.workflow,
      workflowVersion: source.workflowVersion,
      status: source.status,
      input: source.input,
      output: source.output ?? null,
      failure: source.failure ? { code: source.failure.code, message: source.failure.message } : null,
    },
    exportedAt: exportedAt.toISOString(),
    journal: [...source.journal]
      .sort((a, b) => a.position - b.position)
      .map((e) => ({
        position: e.position,
        kind: e.kind,
        name: e.name,
        state: e.state,
        result: e.result,
        error: e.error,
        attempts: e.attempts,
        seq: e.seq,
        cause: e.cause,
      })),
  };
}

/** The first place a replay parts from the recorded run. */
export interface Divergence {
  /** The journal position, or null when the run diverges as a whole (version, input, ending). */
  position: number | null;
  recorded: string;
  found: string;
}

/** How the replay of one recorded history against the current code ended. */
export type HistoryReplay =
  | { ok: true; reached: "journal-end" | "waiting" | "completed" | "failed" }
  | { ok: false; divergence: Divergence; outcome: DryReplayOutcome };

/** Failures the engine, not the body, decides: a replay reaches the journal's end instead. */
const ENGINE_ENDINGS: ReadonlySet<string> = new Set([
  ENGINE_ERRORS.CANCELLED,
  ENGINE_ERRORS.RECOVERY_EXHAUSTED,
  ENGINE_ERRORS.INPUT_INVALID,
]);

/**
 * Replays `history` against `registry` (the current code) without a database (`dryReplay`) and
 * compares it with the recorded run: every recorded position must be called again with the same
 * kind, name and cause, and a run that ended must end alike (the same output, or a failure with the
 * same code). Returns the first divergence; never throws for a history that parsed.
 *
 * @param options.timeoutMs - how long the body may take, in ms (default 5000, as `dryReplay`).
 */
export async function replayHistory(
  history: RecordedHistory,
  registry: WorkflowRegistry,
  options: { timeoutMs?: number } = {},
): Promise<HistoryReplay> {
  const { execution } = history;
  const outcome = await dryReplay(
    {
      id: execution.id,
      orgId: execution.orgId,
      workflow: execution.workflow,
      workflowVersion: execution.workflowVersion,
      input: execution.input,
      journal: history.journal as JournalEntry[],
    },
    registry,
    { ...options, clock: () => latestRecordedTime(history) },
  );
  const diverged = (divergence: Divergence): HistoryReplay => ({ ok: false, divergence, outcome });
  switch (outcome.kind) {
    case "compatible": {
      if (outcome.reached !== "completed") {
        if (execution.status === "completed" || (execution.status === "failed" && !engineEnding(history))) {
          const position = history.journal.length;
          return diverged({ position, recorded: ending(history), found: "a new call, the run goes on" });
        }
        return { ok: true, reached: outcome.reached };
      }
      if (execution.status === "failed")
        return diverged({ position: null, recorded: ending(history), found: "completed" });
      if (
        execution.status === "completed" &&
        canonicalJson(outcome.output) !== canonicalJson(execution.output)
      ) {
        return diverged({
          position: null,
          recorded: `completed with ${canonicalJson(execution.output)}`,
          found: `completed with ${canonicalJson(outcome.output)}`,
        });
      }
      return { ok: true, reached: "completed" };
    }
    case "throws":
      if (execution.status === "failed" && execution.failure?.code === outcome.code) {
        return { ok: true, reached: "failed" };
      }
      return diverged({
        position: null,
        recorded: ending(history),
        found: `failed ${outcome.code}: ${outcome.message}`,
      });
    case "non-determinism":
      return diverged({
        position: outcome.position,
        recorded: describeCall(outcome.recorded),
        found: describeCall(outcome.found),
      });
    case "version-missing":
      return diverged({
        position: null,
        recorded: `${execution.workflow} version ${execution.workflowVersion}`,
        found: `versions ${outcome.registered.join(", ") || "(none)"} registered`,
      });
    case "input-invalid":
      return diverged({
        position: null,
        recorded: "its input",
        found: `the input schema refuses it: ${outcome.message}`,
      });
    case "stalled":
      return diverged({ position: null, recorded: ending(history), found: outcome.message });
  }
}

/**
 * The replay's clock: the latest moment the history records (its export, a timer's wake time, a
 * wait's deadline), so a timer that had fired when the run was recorded fires in its replay too,
 * whenever the replay runs (virtual times of the test kit included).
 */
function latestRecordedTime(history: RecordedHistory): number {
  let latest = Date.parse(history.exportedAt);
  for (const entry of history.journal) {
    const result = entry.result as { wakeAt?: unknown; deadline?: unknown } | null;
    for (const at of [result?.wakeAt, result?.deadline]) {
      if (typeof at === "string" && Date.parse(at) > latest) latest = Date.parse(at);
    }
  }
  return latest;
}

function engineEnding(history: RecordedHistory): boolean {
  return ENGINE_ENDINGS.has(history.execution.failure?.code ?? "");
}

function ending(history: RecordedHistory): string {
  const { execution } = history;
  if (execution.status === "failed") return `failed ${execution.failure?.code ?? "(no code)"}`;
  return execution.status;
}

function describeCall(call: JournalCall): string {
  const after = call.cause === undefined ? "" : ` (after delivery ${call.cause})`;
  return `${call.kind} "${call.name}"${after}`;
}

/** One line for a person: `ok`, or where and how the replay parted from the recorded run. */
export function describeReplay(history: RecordedHistory, replay: HistoryReplay): string {
  const { execution } = history;
  const run = `${execution.workflow} v${execution.workflowVersion} ${execution.id}`;
  if (replay.ok) return `ok       ${run}: replays (${replay.reached})`;
  const { position, recorded, found } = replay.divergence;
  const where = position === null ? "" : ` at position ${position}`;
  return `DIVERGES ${run}${where}: recorded ${recorded}, the code now gives ${found}`;
}
