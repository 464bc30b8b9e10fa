import { ENGINE_ERRORS } from "../../engine/error-codes.js";
import type { FailureRecord } from "../../engine/errors.js";
import { HOLD_RETRY_MS } from "../../engine/turn-runner.js";
import { formatMilliseconds } from "../../values/format.js";

/**
 * What an operator reads about a failure or a hold: the words the API's `guidance`, the CLI and the
 * console all show (docs/console.md, "Holds and failures in words"). Codes stay as they are; only
 * the words around them are built here, from the facts the record carries.
 */

/** A journal position's call as a hold records it (`NonDeterminismError`'s details). */
interface RecordedCall {
  kind?: unknown;
  name?: unknown;
}

function call(value: unknown): string {
  const c = (value ?? {}) as RecordedCall;
  return `${String(c.kind ?? "?")} ${JSON.stringify(String(c.name ?? "?"))}`;
}

function positionOf(hold: FailureRecord): number | null {
  const position = hold.details?.position;
  return typeof position === "number" && Number.isInteger(position) ? position : null;
}

function versionsOf(hold: FailureRecord): string {
  const registered = hold.details?.registered;
  return Array.isArray(registered) && registered.length > 0 ? registered.join(", ") : "none";
}

/** The commands that end a hold once the fix is deployed, and the one that gives up instead. */
function afterTheFix(executionId: string): string {
  return (
    `then resume it: \`tenor runs resume ${executionId}\` (POST /v1/executions/${executionId}/resume). ` +
    `Until then a runner tries it again every ${formatMilliseconds(HOLD_RETRY_MS)}. ` +
    `To give up instead: \`tenor runs cancel ${executionId} --reason "..."\`.`
  );
}

/** What to do about a hold: the position or version that does not replay, and the commands that fix it. */
export function holdGuidance(executionId: string, hold: FailureRecord): string {
  if (hold.code === ENGINE_ERRORS.NON_DETERMINISM) {
    const position = positionOf(hold);
    const at = position === null ? "the journal position named in the message" : `position ${position}`;
    const what =
      position === null
        ? ""
        : ` (it recorded ${call(hold.details.recorded)}; this build calls ${call(hold.details.code)})`;
    return (
      `Held, not failed: the code no longer replays journal ${at}${what}. Deploy code that replays ${at} ` +
      "(check the build first: `tenor compat --against <module or directory of the build>` lists every run " +
      `it would break), ${afterTheFix(executionId)}`
    );
  }
  if (
    hold.code === ENGINE_ERRORS.WORKFLOW_VERSION_UNAVAILABLE ||
    hold.code === ENGINE_ERRORS.WORKFLOW_UNKNOWN
  ) {
    const workflow = String(hold.details?.workflow ?? "the workflow");
    const version = String(hold.details?.version ?? "?");
    return (
      `Held, not failed: no runner that took it registers ${workflow} version ${version} ` +
      `(it had: ${versionsOf(hold)}). Deploy runners that register that version ` +
      `(\`tenor compat --against <module or directory of the build>\` checks the build replays the run), ${afterTheFix(executionId)}`
    );
  }
  return `Held, not failed: ${hold.message}. Deploy a release that resolves it, ${afterTheFix(executionId)}`;
}

/** What a held run waits for, in words: its `fix` wait's summary (the wait's name stays the code). */
export function holdSummary(hold: FailureRecord): string {
  if (hold.code === ENGINE_ERRORS.NON_DETERMINISM) {
    const position = positionOf(hold);
    return position === null
      ? "a deploy of code that replays its journal"
      : `a deploy of code that replays journal position ${position}`;
  }
  if (
    hold.code === ENGINE_ERRORS.WORKFLOW_VERSION_UNAVAILABLE ||
    hold.code === ENGINE_ERRORS.WORKFLOW_UNKNOWN
  ) {
    return `a runner that registers ${String(hold.details?.workflow ?? "the workflow")} version ${String(hold.details?.version ?? "?")}`;
  }
  return `a deploy that resolves ${hold.code}`;
}

/** The person behind a cancellation, as the failure's details record them (src/store/pg-cancellation.ts). */
interface CancelActor {
  name?: unknown;
  subject?: unknown;
}

/** What a caller should do about a terminal failure, from its `retryable` flag and code. */
export function failureGuidance(failure: FailureRecord): string {
  if (failure.code === ENGINE_ERRORS.CANCELLED) {
    const by = failure.details?.requestedBy as CancelActor | undefined;
    const who = by?.subject ? ` by ${String(by.subject)} (key ${String(by.name ?? "?")})` : "";
    const reason = typeof failure.details?.reason === "string" ? `: ${failure.details.reason}` : "";
    return `Cancelled on request${who}${reason}. To run it again, start a new execution with a new Idempotency-Key.`;
  }
  if (failure.retryable) {
    return "Transient: the same request may succeed later. Start a new execution with a new Idempotency-Key; a key whose execution failed keeps answering with that failure.";
  }
  return "Permanent: the same request fails the same way. Change the input or resolve the cause before starting again.";
}
