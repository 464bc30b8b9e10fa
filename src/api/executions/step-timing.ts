import { APPROVAL_SIGNAL_PREFIX } from "../../engine/approvals.js";
import type { JournalView } from "../../engine/execution-client.js";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";

/** When a journal position ended and how long it took, as a reader should see it. */
export interface StepTiming {
  completedAt: string | null;
  durationMs: number | null;
}

/**
 * Timings of a journal as the run lived them (docs/console.md, "Durations"). The engine writes a
 * timer's position once, complete, at the moment the timer is set (its result is the wake time),
 * so its own row spans 0 ms. A timer ends when the run goes past it: at the start of the next
 * position, or when the run ended; while the run still sleeps on it, it has no end yet. Every
 * other position keeps its row's start and completion (a signal or approval wait is written
 * pending when the wait begins and resolved when it is satisfied).
 */
export function stepTimings(
  journal: readonly JournalView[],
  record: ExecutionRecord,
): Map<number, StepTiming> {
  const ordered = [...journal].sort((a, b) => a.position - b.position);
  const timings = new Map<number, StepTiming>();
  ordered.forEach((entry, index) => {
    const completedAt = entry.kind === "sleep" ? timerEnd(ordered[index + 1], record) : entry.completedAt;
    timings.set(entry.position, { completedAt, durationMs: spanMs(entry.startedAt, completedAt) });
  });
  return timings;
}

function timerEnd(next: JournalView | undefined, record: ExecutionRecord): string | null {
  if (next) return next.startedAt;
  return record.status === "completed" || record.status === "failed" ? record.completedAt : null;
}

function spanMs(startedAt: string, completedAt: string | null): number | null {
  if (completedAt === null) return null;
  return Math.max(0, Date.parse(completedAt) - Date.parse(startedAt));
}

/**
 * An approval is journaled as a wait on its reserved signal `$approval:<name>`; readers see it as
 * kind `approval` under the name the workflow declared.
 */
export function presentedWait(kind: string, name: string): { kind: string; name: string } {
  return kind === "signal" && name.startsWith(APPROVAL_SIGNAL_PREFIX)
    ? { kind: "approval", name: name.slice(APPROVAL_SIGNAL_PREFIX.length) }
    : { kind, name };
}
