import type { z } from "zod";
import type { FailureRecord } from "../../engine/errors.js";
import type { JournalView } from "../../engine/execution-client.js";
import type { WaitDescriptor } from "../../engine/execution-store.js";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import { toPgTimestamp, UUID_PATTERN } from "../query-params.js";
import type { ExecutionSchema, FailureSchema, StepSchema, WaitSchema } from "./schemas.js";

/** Path of an execution's status resource (the `Location` of a start). */
export function executionPath(id: string): string {
  return `/v1/executions/${id}`;
}

/** What a caller should do about a failure, from its `retryable` flag and code. */
export function retryGuidance(failure: FailureRecord): string {
  if (failure.code === "CANCELLED") {
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

/** How a cursor's time is written (`toISOString()`). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

/** Opaque list cursor: base64url of the last item's (createdAt, id). */
export function encodeCursor(record: { createdAt: string; id: string }): string {
  return Buffer.from(JSON.stringify([record.createdAt, record.id]), "utf8").toString("base64url");
}

export function decodeCursor(cursor: string): { createdAt: string; id: string } | null {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (!Array.isArray(value) || value.length !== 2) return null;
    const [createdAt, id] = value;
    // Parsed to what PostgreSQL accepts: a tampered cursor is a 400, never a failed cast.
    const at = typeof createdAt === "string" && ISO_INSTANT.test(createdAt) ? toPgTimestamp(createdAt) : null;
    if (at === null) return null;
    if (typeof id !== "string" || !UUID_PATTERN.test(id)) return null;
    return { createdAt: at, id };
  } catch {
    return null;
  }
}
