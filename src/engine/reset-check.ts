import { type DryReplayOutcome, dryReplay, type JournalCall } from "./dry-replay.js";
import { ENGINE_ERRORS } from "./error-codes.js";
import type { JournalEntry } from "./execution-store.js";
import type { WorkflowRegistry } from "./registry.js";

/** The run a reset would move to a newer version. */
export interface ResetPrefixTarget {
  id: string;
  orgId: string;
  workflow: string;
  input: unknown;
}

/** Why the new version cannot take the run over at the chosen position. */
export interface PrefixRefusal {
  code: typeof ENGINE_ERRORS.RESET_PREFIX_NOT_REPLAYABLE;
  message: string;
  details: Record<string, unknown>;
}

/**
 * Whether `toVersion` of the run's workflow replays `prefix` (the journal positions a reset keeps,
 * docs/engine.md, "Reset"): the dry replay `tenor compat` runs, over the kept positions only. Null
 * when it does; otherwise a refusal naming the first position that differs and both calls.
 */
export async function resetPrefixRefusal(
  registry: WorkflowRegistry,
  run: ResetPrefixTarget,
  toVersion: number,
  prefix: readonly JournalEntry[],
  options: { timeoutMs?: number } = {},
): Promise<PrefixRefusal | null> {
  const outcome = await dryReplay(
    {
      id: run.id,
      orgId: run.orgId,
      workflow: run.workflow,
      workflowVersion: toVersion,
      input: run.input,
      journal: prefix,
    },
    registry,
    options,
  );
  if (outcome.kind === "compatible") return null;
  const keep = prefix.length;
  const where =
    keep === 0
      ? `${run.workflow} version ${toVersion} cannot take execution ${run.id} over even from position 0`
      : `${run.workflow} version ${toVersion} cannot replay positions 0 to ${keep - 1} of execution ${run.id}`;
  return {
    code: ENGINE_ERRORS.RESET_PREFIX_NOT_REPLAYABLE,
    message: `${where}: ${inWords(outcome)}`,
    details: { executionId: run.id, workflow: run.workflow, toVersion, kept: keep, ...detailsOf(outcome) },
  };
}

/**
 * Where a reset onto `toVersion` starts when nothing is named (a bulk reset-to-version): the first
 * position of `journal` the version does not replay, or the journal's length when it replays all
 * of it (nothing is set aside). The refusal when the version cannot take the run at any position
 * it found: the input no longer decodes, the version is missing, the code throws or stalls.
 * The reset itself then checks the prefix it keeps (`resetPrefixRefusal` again, over fewer positions).
 */
export async function replayableEnd(
  registry: WorkflowRegistry,
  run: ResetPrefixTarget,
  toVersion: number,
  journal: readonly JournalEntry[],
  options: { timeoutMs?: number } = {},
): Promise<number | PrefixRefusal> {
  const refusal = await resetPrefixRefusal(registry, run, toVersion, journal, options);
  if (refusal === null) return journal.length;
  const { problem, position } = refusal.details;
  return problem === "non-determinism" && typeof position === "number" ? position : refusal;
}

function call(c: JournalCall): string {
  return `${c.kind} "${c.name}"${c.cause !== undefined ? ` after delivery ${c.cause}` : ""}`;
}

function inWords(outcome: Exclude<DryReplayOutcome, { kind: "compatible" }>): string {
  switch (outcome.kind) {
    case "non-determinism":
      return `at position ${outcome.position} the journal records ${call(outcome.recorded)}, the new code calls ${call(outcome.found)}`;
    case "version-missing":
      return "this api does not have that version";
    case "input-invalid":
      return `the run's input no longer decodes: ${outcome.message}`;
    case "throws":
      return `the code throws ${outcome.code}: ${outcome.message}`;
    case "stalled":
      return outcome.message;
  }
}

function detailsOf(outcome: Exclude<DryReplayOutcome, { kind: "compatible" }>): Record<string, unknown> {
  if (outcome.kind === "non-determinism") {
    return {
      problem: outcome.kind,
      position: outcome.position,
      recorded: outcome.recorded,
      found: outcome.found,
    };
  }
  return { problem: outcome.kind, ...("message" in outcome ? { reason: outcome.message } : {}) };
}
