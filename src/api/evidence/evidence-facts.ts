import { APPROVAL_SIGNAL_PREFIX } from "../../engine/approvals.js";
import type { JournalView } from "../../engine/execution-client.js";
import type { VoteRecord } from "../../store/pg-approvals.js";
import type { ExecutionAuditRecord, SignalRecord } from "../../store/pg-evidence.js";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import type { ResetHistory } from "../../store/pg-reset.js";
import { presentedWait } from "../executions/step-timing.js";

/** Everything an evidence export is built from, read within the caller's organisation. */
export interface EvidenceSources {
  execution: ExecutionRecord;
  input: unknown;
  journal: readonly JournalView[];
  votes: readonly VoteRecord[];
  signals: readonly SignalRecord[];
  audit: readonly ExecutionAuditRecord[];
  /** Its resets, each with the positions it set aside (absent: none). */
  resets?: readonly ResetHistory[];
}

export interface EvidenceFact {
  type: "execution" | "journal" | "approval" | "signal" | "audit" | "transition" | "transaction" | "reset";
  at: string | null;
  data: unknown;
}

/** Journal kinds during which the execution waits for something outside it. */
const WAIT_KINDS = new Set(["sleep", "signal", "child", "condition"]);
const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

/**
 * The export's facts in time order (ties keep the order they are listed in): the execution as
 * started, each journal position, each vote, signal and audit row, the status transitions and the
 * transaction hashes its steps recorded, and each reset with the journal positions it set aside
 * (history the run no longer replays: `journal` facts are the positions it stands on now). Transitions are derived from journal timestamps: Tenor
 * keeps no separate status history. An approval is named as the workflow declared it (kind
 * `approval`), never by its reserved signal `$approval:<name>`; each signal names its sender.
 */
export function evidenceFacts(sources: EvidenceSources): EvidenceFact[] {
  const { execution: e } = sources;
  const facts: EvidenceFact[] = [
    {
      type: "execution",
      at: e.createdAt,
      data: {
        id: e.id,
        orgId: e.orgId,
        workflow: e.workflow,
        workflowVersion: e.workflowVersion,
        parentId: e.parentId,
        createdBy: e.createdBy,
        key: e.key,
        idempotencyKey: e.idempotencyKey,
        input: sources.input,
      },
    },
    ...sources.journal.map((j) => ({
      type: "journal" as const,
      at: j.completedAt ?? j.startedAt,
      data: {
        position: j.position,
        ...presentedWait(j.kind, j.name),
        state: j.state,
        attempts: j.attempts,
        startedAt: j.startedAt,
        completedAt: j.completedAt,
        result: j.result ?? null,
        error: j.error ?? null,
      },
    })),
    ...sources.votes.map((v) => ({
      type: "approval" as const,
      at: v.approver.at,
      data: {
        name: v.name,
        position: v.position,
        decision: v.decision,
        paramsHash: v.paramsHash,
        reason: v.reason,
        approver: {
          keyId: v.approver.keyId,
          name: v.approver.name,
          role: v.approver.role,
          subject: v.subject,
        },
      },
    })),
    ...sources.signals.map((s) => ({ type: "signal" as const, at: s.createdAt, data: signalData(s) })),
    ...sources.audit.map((a) => ({ type: "audit" as const, at: a.at, data: a })),
    ...(sources.resets ?? []).map((r) => ({ type: "reset" as const, at: r.at, data: resetData(r) })),
    ...transitions(sources),
    ...transactions(sources.journal),
  ];
  return facts
    .map((fact, index) => ({ fact, index }))
    .sort((a, b) => (a.fact.at ?? "").localeCompare(b.fact.at ?? "") || a.index - b.index)
    .map(({ fact }) => fact);
}

function transitions(sources: EvidenceSources): EvidenceFact[] {
  const { execution: e } = sources;
  const out: EvidenceFact[] = [
    { type: "transition", at: e.createdAt, data: { status: "running", cause: "started" } },
  ];
  for (const j of sources.journal) {
    const activity = j.kind === "step" && isRecord(j.result) && typeof j.result.activity === "string";
    if (!WAIT_KINDS.has(j.kind) && !activity) continue;
    const wait = presentedWait(j.kind, j.name);
    const cause = `${wait.kind} ${wait.name} (position ${j.position})`;
    out.push({ type: "transition", at: j.startedAt, data: { status: "waiting", cause } });
    if (j.completedAt)
      out.push({ type: "transition", at: j.completedAt, data: { status: "running", cause } });
  }
  if (e.status === "completed" || e.status === "failed") {
    out.push({
      type: "transition",
      at: e.completedAt,
      data: {
        status: e.status,
        cause: e.failure ? `${e.failure.code}: ${e.failure.message}` : "returned",
        // The failure's facts as recorded: for a cancellation, who asked and why (requestedBy, reason).
        ...(e.failure ? { failure: { code: e.failure.code, details: e.failure.details ?? {} } } : {}),
      },
    });
  } else if (e.status !== "running") {
    out.push({ type: "transition", at: e.updatedAt, data: { status: e.status, cause: "current" } });
  }
  return out;
}

/**
 * A delivered signal: an approval's decision (delivered by the engine once its votes decided, so
 * `sentBy: null`; the approval records name who voted) is `kind: approval` under its declared name.
 */
function signalData(s: SignalRecord) {
  const approval = s.name.startsWith(APPROVAL_SIGNAL_PREFIX);
  return {
    kind: approval ? "approval" : "signal",
    name: approval ? s.name.slice(APPROVAL_SIGNAL_PREFIX.length) : s.name,
    sentBy: s.sentBy,
    payload: s.payload,
    // A decision's key is the engine's own (one per approval position), not a caller's.
    idempotencyKey: approval ? null : s.idempotencyKey,
    consumedPosition: s.consumedPosition,
    consumedAt: s.consumedAt,
    createdAt: s.createdAt,
  };
}

/** Transaction hashes anywhere in a step's recorded result, under a member whose name says hash. */
function transactions(journal: readonly JournalView[]): EvidenceFact[] {
  const out: EvidenceFact[] = [];
  for (const j of journal) {
    for (const { path, hash } of findHashes(j.result, "result")) {
      out.push({
        type: "transaction",
        at: j.completedAt ?? j.startedAt,
        data: { position: j.position, step: j.name, path, hash: hash.toLowerCase() },
      });
    }
  }
  return out;
}

function findHashes(value: unknown, path: string, depth = 0): { path: string; hash: string }[] {
  if (depth > 10 || !value || typeof value !== "object") return [];
  const found: { path: string; hash: string }[] = [];
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const at = `${path}.${key}`;
    if (typeof child === "string" && /hash/i.test(key) && TX_HASH.test(child))
      found.push({ path: at, hash: child });
    else found.push(...findHashes(child, at, depth + 1));
  }
  return found;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A reset and the positions it set aside, as they were when it set them aside. */
function resetData(r: ResetHistory) {
  const { entries, ...reset } = r;
  return {
    ...reset,
    setAsideEntries: entries.map((e) => ({ ...e, ...presentedWait(e.kind, e.name) })),
  };
}
