import type { z } from "zod";
import type { FailureRecord } from "../../engine/errors.js";
import type { JournalView } from "../../engine/execution-client.js";
import { pausedBySubject, type WaitDescriptor } from "../../engine/execution-store.js";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import { childFundingOf, childFundingSummary } from "./child-funding.js";
import { failureGuidance, holdGuidance, holdSummary } from "./guidance.js";
import type {
  CancellationSchema,
  ExecutionSchema,
  FailureSchema,
  StepSchema,
  WaitSchema,
} from "./schemas.js";
import { presentedWait, type StepTiming } from "./step-timing.js";

/** Path of an execution's status resource (the `Location` of a start). */
export function executionPath(id: string): string {
  return `/v1/executions/${id}`;
}

function failureOf(record: FailureRecord, guidance: string): z.infer<typeof FailureSchema> {
  return {
    code: record.code,
    message: record.message,
    retryable: record.retryable,
    guidance,
    details: record.details ?? {},
    ...(record.escaped ? { escaped: record.escaped } : {}),
  };
}

export function toWait(w: WaitDescriptor): z.infer<typeof WaitSchema> {
  return {
    kind: w.kind,
    name: w.name,
    ...(w.position !== undefined ? { position: w.position } : {}),
    until: w.until ?? null,
    ...(w.details ? { details: w.details } : {}),
  };
}

/**
 * A held run's `fix` wait, whose name is the hold's code, with what it waits for in words; a
 * `child` wait whose child waits for gas funding (child-funding.ts) with that request in words; a
 * paused run's `pause` wait says who paused it.
 */
function inWords(wait: z.infer<typeof WaitSchema>, hold: FailureRecord | null): z.infer<typeof WaitSchema> {
  if (wait.kind === "pause") return { ...wait, summary: pauseSummary(wait.details ?? {}) };
  if (wait.kind === "fix" && hold) return { ...wait, summary: holdSummary(hold) };
  const funding = childFundingOf(wait);
  return funding ? { ...wait, summary: childFundingSummary(funding) } : wait;
}

/** `paused by <subject>` (and why, when a reason was given): how a pause reads to people. */
export function pauseSummary(pause: { by?: unknown; reason?: unknown }): string {
  const subject = pausedBySubject(pause);
  const reason = typeof pause.reason === "string" ? `: ${pause.reason}` : "";
  return `paused by ${subject ?? "an operator"}${reason}`;
}

/** When, by whom and why a cancellation was requested; null when none was. */
export function cancellationOf(r: ExecutionRecord): z.infer<typeof CancellationSchema> | null {
  if (r.cancelRequestedAt === null) return null;
  return { requestedAt: r.cancelRequestedAt, by: r.cancelRequestedBy, reason: r.cancelReason };
}

export function toExecutionResource(r: ExecutionRecord): z.infer<typeof ExecutionSchema> {
  const self = executionPath(r.id);
  const waiting = r.status === "waiting" || r.status === "suspended";
  return {
    id: r.id,
    workflow: r.workflow,
    workflowVersion: r.workflowVersion,
    status: r.status,
    waitingFor: waiting ? (r.waitingFor ?? []).map((w) => inWords(toWait(w), r.hold)) : [],
    wakeAt: waiting ? r.wakeAt : null,
    progress: r.progress,
    result: r.status === "completed" ? r.output : null,
    failure: r.failure ? failureOf(r.failure, failureGuidance(r.failure)) : null,
    hold: r.hold ? failureOf(r.hold, holdGuidance(r.id, r.hold)) : null,
    key: r.key,
    idempotencyKey: r.idempotencyKey,
    idempotencyExpiresAt: r.idempotencyExpiresAt,
    parentId: r.parentId,
    cancelRequestedAt: r.cancelRequestedAt,
    cancellation: cancellationOf(r),
    pause: r.paused,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    completedAt: r.completedAt,
    links: { self, steps: `${self}/steps`, approvals: `${self}/approvals`, activity: `${self}/activity` },
  };
}

/** One journal position; `timing` from {@link stepTimings} (a timer's real end), else the row's own. */
export function toStep(
  entry: JournalView,
  withPayloads: boolean,
  timing?: StepTiming,
): z.infer<typeof StepSchema> {
  const completedAt = timing ? timing.completedAt : entry.completedAt;
  const durationMs = timing
    ? timing.durationMs
    : entry.completedAt
      ? Date.parse(entry.completedAt) - Date.parse(entry.startedAt)
      : null;
  const shown = presentedWait(entry.kind, entry.name);
  return {
    position: entry.position,
    kind: shown.kind as z.infer<typeof StepSchema>["kind"],
    name: shown.name,
    state: entry.state,
    attempts: entry.attempts,
    startedAt: entry.startedAt,
    completedAt,
    durationMs,
    errorCode: entry.error?.code ?? null,
    ...(withPayloads ? { result: entry.result ?? null, error: entry.error ?? null } : {}),
  };
}
