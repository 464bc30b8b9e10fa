import { z } from "zod";
import type { ChildDispatcher } from "./context.js";
import { WorkflowContext } from "./context.js";
import { ENGINE_ERRORS } from "./error-codes.js";
import { type NonDeterminismError, TurnFencedError } from "./errors.js";
import type { ExecutionStore, JournalEntry } from "./execution-store.js";
import { encodeValue } from "./journal-codec.js";
import type { WorkflowRegistry } from "./registry.js";
import { ServiceSet, serviceLookup } from "./services.js";

/** One unfinished execution as the dry replay needs it. */
export interface DryReplayTarget {
  id: string;
  orgId: string;
  workflow: string;
  workflowVersion: number;
  input: unknown;
  journal: readonly JournalEntry[];
}

/** A recorded or attempted journal call: its kind, name and (for ordering) the delivery it followed. */
export interface JournalCall {
  kind: string;
  name: string;
  cause?: number;
}

/** How a dry replay of one execution against a build's workflows ended. */
export type DryReplayOutcome =
  /** The code replayed every recorded position and reached the live edge. */
  | { kind: "compatible"; reached: "journal-end" | "waiting" }
  /** The code replayed every recorded position and returned `output` (encoded as the journal stores it). */
  | { kind: "compatible"; reached: "completed"; output: unknown }
  /** The code calls something else at `position` than the journal recorded there. */
  | { kind: "non-determinism"; position: number; recorded: JournalCall; found: JournalCall; message: string }
  /** The build has no definition of the workflow version the execution runs on. */
  | { kind: "version-missing"; registered: number[] }
  /** The stored input no longer decodes with the build's input schema. */
  | { kind: "input-invalid"; message: string }
  /** The code threw during the replay, outside any step: the run would fail. */
  | { kind: "throws"; code: string; message: string }
  /** The body neither finished nor stopped within the time allowed (it awaits something outside the context). */
  | { kind: "stalled"; message: string };

/** Outcomes that mean the execution would break on the build. */
export function isBreaking(outcome: DryReplayOutcome): boolean {
  return outcome.kind !== "compatible";
}

/** Every write or dispatch of a dry replay ends it: reaching one means the replay is at the live edge. */
function edge(executionId: string, what: string): never {
  throw new TurnFencedError(executionId, 0, `${what} (dry replay writes nothing)`);
}

function dryStore(executionId: string): ExecutionStore {
  const stop = (what: string) => async () => edge(executionId, what);
  return {
    beginTurn: stop("turn"),
    appendEntry: stop("journal entry"),
    resolveEntry: stop("journal resolution"),
    numberDelivery: stop("delivery number"),
    consumeSignal: stop("signal"),
    currentTurn: stop("fence check"),
    turnControl: stop("pause check"),
    createExecution: stop("child execution"),
    getSummary: stop("child lookup"),
    // A progress snapshot takes no journal position and decides nothing: the replay goes on past it
    // (a body that reports progress after its last recorded call still reaches its return).
    setProgress: async () => undefined,
    complete: stop("completion"),
    fail: stop("failure"),
    park: stop("park"),
    suspend: stop("suspension"),
    hold: stop("hold"),
  };
}

function dryDispatcher(executionId: string): ChildDispatcher {
  return {
    dispatchChild: async () => edge(executionId, "child dispatch"),
    dispatchActivity: async () => edge(executionId, "activity dispatch"),
  };
}

/**
 * Replays one execution's journal against `registry`'s definition of its workflow version,
 * through the engine's own context (journal cursor and delivery order), without side effects:
 * recorded positions return their recorded values, and the first call beyond the journal, or any
 * write or dispatch, ends the replay. Nothing is read or written outside the given journal.
 *
 * @param options.timeoutMs - how long the body may take before the replay reports `stalled` (default 5000).
 * @param options.clock - the workflow clock of the replay, ms since the epoch (default `Date.now`):
 *   a recorded timer is due, and replays, once this clock has passed its wake time.
 */
export async function dryReplay(
  target: DryReplayTarget,
  registry: WorkflowRegistry,
  options: { timeoutMs?: number; clock?: () => number } = {},
): Promise<DryReplayOutcome> {
  const workflow = registry.version(target.workflow, target.workflowVersion);
  if (!workflow) return { kind: "version-missing", registered: registry.versions(target.workflow) };
  const input = workflow.input.safeParse(target.input);
  if (!input.success) return { kind: "input-invalid", message: z.prettifyError(input.error) };
  const ctx = new WorkflowContext({
    fence: { executionId: target.id, turn: 0 },
    orgId: target.orgId,
    journal: target.journal,
    store: dryStore(target.id),
    dispatcher: dryDispatcher(target.id),
    hooks: {},
    clock: options.clock ?? Date.now,
    // Nothing outside the journal: a declared service is unavailable, as on a process that is no runner.
    services: serviceLookup("workflow", workflow, ServiceSet.empty),
    replayOnly: true,
  });
  const counted = countingPositions(ctx);
  const timeoutMs = options.timeoutMs ?? 5_000;
  let timer: NodeJS.Timeout | undefined;
  const body = (async () => {
    try {
      const value = await workflow.run(counted.ctx, input.data);
      return { ok: true as const, output: encodeValue(value, workflow.output) };
    } catch (error) {
      return { ok: false as const, error };
    } finally {
      await ctx.drain();
    }
  })();
  const settled = await Promise.race([
    body,
    new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
  if (settled === "timeout") {
    return { kind: "stalled", message: `the body did not settle within ${timeoutMs} ms` };
  }
  const outcome = classify(ctx, settled);
  if (outcome.kind === "compatible" && outcome.reached === "completed") {
    return endedEarly(target.journal, counted.taken()) ?? outcome;
  }
  return outcome;
}

/** The context calls that take a journal position (docs/engine.md, the table of context calls). */
const POSITION_CALLS = new Set([
  "step",
  "sleep",
  "sleepUntil",
  "waitForSignal",
  "waitForApproval",
  "waitFor",
  "child",
  "now",
  "uuid",
  "random",
]);

/**
 * The body's view of `ctx`, counting the positions it takes, so a body that returns before the
 * journal's last position is told apart from one that replayed it all (the cursor does not say).
 */
function countingPositions(ctx: WorkflowContext): { ctx: WorkflowContext; taken(): number } {
  let taken = 0;
  const counting = new Proxy(ctx, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      if (typeof property !== "string" || !POSITION_CALLS.has(property)) return value.bind(target);
      return (...args: unknown[]) => {
        taken++;
        return value.apply(target, args);
      };
    },
  });
  return { ctx: counting, taken: () => taken };
}

/** A body that returned while the journal still records positions it did not take diverged there. */
function endedEarly(journal: readonly JournalEntry[], taken: number): DryReplayOutcome | null {
  const next = [...journal].sort((a, b) => a.position - b.position).find((e) => e.position >= taken);
  if (!next) return null;
  const recorded: JournalCall = {
    kind: next.kind,
    name: next.name,
    ...(next.cause !== null ? { cause: next.cause } : {}),
  };
  return {
    kind: "non-determinism",
    position: next.position,
    recorded,
    found: { kind: "return", name: "(the body returned)" },
    message: `the body returned at position ${next.position}, where the journal records ${next.kind} "${next.name}"`,
  };
}

function classify(
  ctx: WorkflowContext,
  settled: { ok: true; output: unknown } | { ok: false; error: unknown },
): DryReplayOutcome {
  const reason = ctx.stop.reason;
  if (reason?.kind === "hold") return nonDeterminism(reason.error);
  if (reason?.kind === "fenced") return { kind: "compatible", reached: "journal-end" };
  if (reason?.kind === "park") return { kind: "compatible", reached: "waiting" };
  if (reason?.kind === "suspend") {
    return { kind: "stalled", message: `the replay suspended at ${reason.wait.name}` };
  }
  if (settled.ok) return { kind: "compatible", reached: "completed", output: settled.output };
  const error = settled.error as { code?: unknown; message?: unknown };
  return {
    kind: "throws",
    code: typeof error?.code === "string" ? error.code : ENGINE_ERRORS.WORKFLOW_CODE_ERROR,
    message: typeof error?.message === "string" ? error.message : String(settled.error),
  };
}

function nonDeterminism(error: NonDeterminismError): DryReplayOutcome {
  const details = error.details as { position: number; recorded: JournalCall; code: JournalCall };
  return {
    kind: "non-determinism",
    position: details.position,
    recorded: details.recorded,
    found: details.code,
    message: error.message,
  };
}
