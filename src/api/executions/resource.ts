import type { z } from "zod";
import { ENGINE_ERRORS } from "../../engine/error-codes.js";
import type { FailureRecord } from "../../engine/errors.js";
import type { JournalView } from "../../engine/execution-client.js";
import type { WaitDescriptor } from "../../engine/execution-store.js";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import type { ExecutionSchema, FailureSchema, StepSchema, WaitSchema } from "./schemas.js";

/** Path of an execution's status resource (the `Location` of a start). */
export function executionPath(id: string): string {
  return `/v1/executions/${id}`;
}

/** What a caller should do about a failure, from its `retryable` flag and code. */
export function retryGuidance(failure: FailureRecord): string {
  if (failure.code === ENGINE_ERRORS.CANCELLED) {
    return "Cancelled on request. To run it again, start a new execution with a new Idempotency-Key.";
  }
  if (failure.retryable) {
    return "Transient: the same request may succeed later. Start a new execution with a new Idempotency-Key; a key whose execution failed keeps answering with that failure.";
  }
  return "Permanent: the same request fails the same way. Change the input or resolve the cause before starting again.";
}

function failureOf(record: FailureRecord | null): z.infer<typeof FailureSchema> | null {
  if (!record) return null;
  return {
    code: record.code,
    message: record.message,
    retryable: record.retryable,
    guidance: retryGuidance(record),
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

export function toExecutionResource(r: ExecutionRecord): z.infer<typeof ExecutionSchema> {
  const self = executionPath(r.id);
  const waiting = r.status === "waiting" || r.status === "suspended";
  return {
    id: r.id,
    workflow: r.workflow,
    workflowVersion: r.workflowVersion,
    status: r.status,
    waitingFor: waiting ? (r.waitingFor ?? []).map(toWait) : [],
    wakeAt: waiting ? r.wakeAt : null,
    progress: r.progress,
    result: r.status === "completed" ? r.output : null,
    failure: failureOf(r.failure),
    hold: failureOf(r.hold),
    key: r.key,
    idempotencyKey: r.idempotencyKey,
    idempotencyExpiresAt: r.idempotencyExpiresAt,
    parentId: r.parentId,
    cancelRequestedAt: r.cancelRequestedAt,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    completedAt: r.completedAt,
    links: { self, steps: `${self}/steps`, approvals: `${self}/approvals` },
  };
}

export function toStep(entry: JournalView, withPayloads: boolean): z.infer<typeof StepSchema> {
  const durationMs = entry.completedAt ? Date.parse(entry.completedAt) - Date.parse(entry.startedAt) : null;
  return {
    position: entry.position,
    kind: entry.kind,
    name: entry.name,
    state: entry.state,
    attempts: entry.attempts,
    startedAt: entry.startedAt,
    completedAt: entry.completedAt,
    durationMs,
    errorCode: entry.error?.code ?? null,
    ...(withPayloads ? { result: entry.result ?? null, error: entry.error ?? null } : {}),
  };
}
