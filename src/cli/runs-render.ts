import type { KeyQueueEntry } from "../api/executions/key-queue.js";
import { renderKeyQueue } from "./key-queue-render.js";
import { formatDuration, renderFields, renderTable } from "./table.js";

/** The parts of the API's resources the human renderings show (the API's schemas define them). */
interface Wait {
  kind: string;
  name: string;
  summary?: string;
  until: string | null;
  details?: Record<string, unknown>;
}
interface Failure {
  code: string;
  message: string;
  retryable: boolean;
  guidance: string;
}
/** `cancellation` of an execution: when, by which key, why. */
export interface Cancellation {
  requestedAt: string;
  by: { name: string; subject: string; role: string } | null;
  reason: string | null;
}

/** ` by alice@acme (key ops-laptop): wrong recipient`, or empty when nothing is known. */
export function cancelledBy(c: Cancellation | null | undefined): string {
  if (!c) return "";
  return `${c.by ? ` by ${c.by.subject} (key ${c.by.name})` : ""}${c.reason ? `: ${c.reason}` : ""}`;
}

/** `pause` of an execution: when, by which key, why. */
export interface Pause {
  at: string;
  by: { name: string; subject: string; role: string } | null;
  reason: string | null;
}

/** A reset of an execution (`resets` of `GET /v1/executions/{id}`), with the positions it set aside. */
export interface ResetBody {
  id: string;
  position: number;
  fromVersion: number;
  toVersion: number;
  at: string;
  by: { name: string; subject: string; role: string } | null;
  reason: string | null;
  setAside: number;
  signalsReturned: number;
  entries?: { position: number; kind: string; name: string; state: string }[];
}

export interface ExecutionBody {
  id: string;
  workflow: string;
  workflowVersion: number;
  status: string;
  waitingFor: Wait[];
  wakeAt: string | null;
  progress: Record<string, unknown> | null;
  failure: Failure | null;
  hold: Failure | null;
  parentId: string | null;
  cancelRequestedAt: string | null;
  cancellation?: Cancellation | null;
  pause?: Pause | null;
  resets?: ResetBody[];
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
  /** Only in the single-run read: the key lines it is queued in. */
  keyQueue?: KeyQueueEntry[];
}
interface StepBody {
  position: number;
  kind: string;
  name: string;
  state: string;
  attempts: number;
  startedAt: string;
  completedAt: string | null;
  durationMs: number | null;
  errorCode: string | null;
}

export function renderExecutionList(body: { items: ExecutionBody[]; nextCursor: string | null }): string {
  const table = renderTable(
    ["ID", "WORKFLOW", "STATUS", "WAITING FOR", "CREATED", "UPDATED"],
    body.items.map((e) => [
      e.id,
      `${e.workflow}@${e.workflowVersion}`,
      e.status,
      e.waitingFor.map(describeWait).join("; ") || null,
      e.createdAt,
      e.updatedAt,
    ]),
  );
  return body.nextCursor ? `${table}more: --cursor ${body.nextCursor}\n` : table;
}

/** What a wait is for and until when, in one phrase; a held run's wait in words, its code in brackets. */
export function describeWait(wait: Wait): string {
  const until = wait.until ? ` until ${wait.until}` : "";
  if (wait.kind === "fix" && wait.summary) return `held for ${wait.summary} (${wait.name})${until}`;
  if (wait.kind === "pause" && wait.summary) return wait.summary;
  if (wait.kind === "child" && wait.summary) return `child ${wait.name} waiting for ${wait.summary}${until}`;
  return `${wait.kind} ${wait.name}${until}`;
}

export function renderExecution(e: ExecutionBody): string {
  let text = renderFields([
    ["id", e.id],
    ["workflow", `${e.workflow} version ${e.workflowVersion}`],
    ["status", e.status],
    ["progress", e.progress],
    ["wakes at", e.wakeAt],
    ["parent", e.parentId],
    ["cancel requested", e.cancelRequestedAt],
    [
      "cancelled by",
      e.cancellation?.by
        ? `${e.cancellation.by.subject} (key ${e.cancellation.by.name}, ${e.cancellation.by.role})`
        : null,
    ],
    ["cancel reason", e.cancellation?.reason ?? null],
    ["paused", e.pause ? `${e.pause.at}${cancelledBy({ requestedAt: e.pause.at, ...e.pause })}` : null],
    ["created", e.createdAt],
    ["updated", e.updatedAt],
    ["finished", e.completedAt],
  ]);
  if (e.waitingFor.length > 0) {
    text += "waiting for:\n";
    for (const wait of e.waitingFor) {
      text += `  - ${describeWait(wait)}\n`;
      const details = wait.details ?? {};
      if (wait.kind === "approval")
        text += `    params ${JSON.stringify(details.params)}\n    hash ${String(details.paramsHash)}\n`;
      else if (Object.keys(details).length > 0) text += `    ${JSON.stringify(details)}\n`;
    }
  }
  text += renderKeyQueue(e.keyQueue);
  if (e.failure) {
    const f = e.failure;
    text += `failure: ${f.code}: ${f.message}\n  ${f.retryable ? "retryable" : "not retryable"}: ${f.guidance}\n`;
  }
  if (e.hold) text += `held: ${e.hold.code}: ${e.hold.message}\n  what to do: ${e.hold.guidance}\n`;
  return text + renderResets(e.resets ?? []);
}

/** Each reset, and under it the positions it set aside (kept for the record, no longer replayed). */
export function renderResets(resets: readonly ResetBody[]): string {
  let text = "";
  for (const r of resets) {
    const by = r.by ? ` by ${r.by.subject} (key ${r.by.name})` : "";
    text += `reset ${r.at}${by}${r.reason ? `: ${r.reason}` : ""}\n`;
    text += `  from position ${r.position}, version ${r.fromVersion} → ${r.toVersion}; set aside:\n`;
    for (const entry of r.entries ?? []) {
      text += `    ${entry.position} ${entry.kind} ${entry.name} (${entry.state})\n`;
    }
  }
  return text;
}

/** The journal as a timeline: each position's start relative to the first, its duration and outcome. */
export function renderSteps(body: { executionId: string; steps: StepBody[] }): string {
  const origin = body.steps.length > 0 ? Date.parse(body.steps[0]?.startedAt ?? "") : 0;
  return renderTable(
    ["POS", "KIND", "NAME", "STATE", "ATTEMPTS", "AT", "DURATION", "ERROR"],
    body.steps.map((s) => [
      s.position,
      s.kind,
      s.name,
      s.state,
      s.attempts,
      `+${formatDuration(Date.parse(s.startedAt) - origin)}`,
      s.durationMs === null ? "(waiting)" : formatDuration(s.durationMs),
      s.errorCode,
    ]),
  );
}
