import type { ApprovalWaitDetails } from "../../engine/approvals.js";
import type { JournalView } from "../../engine/execution-client.js";
import type { WaitDescriptor } from "../../engine/execution-store.js";
import type { VoteRecord } from "../../store/pg-approvals.js";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import type { ResetHistory } from "../../store/pg-reset.js";
import { roleMay } from "../auth/permissions.js";
import type { Activity } from "../executions/activity.js";
import { childFundingOf, childFundingSummary } from "../executions/child-funding.js";
import { failureGuidance, holdGuidance } from "../executions/guidance.js";
import type { KeyQueueEntry } from "../executions/key-queue.js";
import { toStep } from "../executions/resource.js";
import { CANCEL_REASON_MAX } from "../executions/schemas.js";
import { stepTimings } from "../executions/step-timing.js";
import { auditSection, familySection, inputOutputSection, signalsSection } from "./activity-sections.js";
import type { ConsoleUser } from "./console-auth.js";
import { type ConsoleClock, timeCell, UTC_CLOCK_ZONE } from "./console-time.js";
import { feeBumpsSection } from "./fee-bumps-section.js";
import { describeWait, duration, executionHref, statusBadge } from "./fragments.js";
import { type Html, html, jsonBlock } from "./html.js";
import { keyQueueSection } from "./key-queue-section.js";
import { resetForm, resetsSection } from "./reset-section.js";

/** Everything one execution's page shows. */
export interface ExecutionPageData {
  record: ExecutionRecord;
  journal: readonly JournalView[];
  votes: readonly VoteRecord[];
  user: ConsoleUser;
  /** Input, output, family, signals and audit entries (src/api/executions/activity.ts). */
  activity: Activity;
  /** The moment of the render: relative times ("3 min ago") are true then. */
  now: Date;
  /** The viewer's IANA zone for absolute times (src/api/console/console-zone.ts); UTC when absent. */
  zone?: string;
  /** The key lines the run is queued in and who holds them (src/api/executions/key-queue.ts). */
  keyQueue?: readonly KeyQueueEntry[];
  /** The run's resets with the positions each set aside (docs/engine.md, "Reset"); absent: none. */
  resets?: readonly ResetHistory[];
  /** Whether the api has an evidence signing key (else the export answers EVIDENCE_SIGNING_DISABLED). */
  evidenceSigned?: boolean;
}

/** Notices an action leaves on the page it redirects to: a closed list, never text from the request. */
export const NOTICES = {
  voted: "Your vote was recorded.",
  signalled: "The signal was delivered.",
  cancelled: "Cancellation was requested; the next turn ends the run.",
  resumed: "The run was woken and runs again now.",
  paused: "The run is paused: it finishes its current step and takes no new turn until unpaused.",
  unpaused: "The run is unpaused and runs again now.",
  reset: "The run was reset onto the newest version and runs again now; the later positions are set aside.",
} as const;
export type Notice = keyof typeof NOTICES;

/** The body of an execution's page: status, waits, progress, failure, approvals, journal, children, actions. */
export function executionBody(
  data: ExecutionPageData,
  alert: { code: string; message: string } | null,
  notice: Notice | null,
): Html {
  const { record } = data;
  const may = (p: Parameters<typeof roleMay>[1]) => roleMay(data.user.principal.role, p);
  const waiting = record.status === "waiting" || record.status === "suspended";
  const waits = waiting ? (record.waitingFor ?? []) : [];
  const clock: ConsoleClock = { zone: data.zone ?? UTC_CLOCK_ZONE, now: data.now };
  const at = (iso: string | null) => timeCell(iso, clock);
  return html`
${alert ? html`<section class="alert" role="alert"><strong>${alert.code}</strong>: ${alert.message}</section>` : null}
${notice ? html`<section role="status">${NOTICES[notice]}</section>` : null}
<section><h2>Status</h2><p>${statusBadge(record.status)} ${record.workflow} version ${record.workflowVersion}</p>
<table><tbody>
<tr><th>Execution</th><td>${record.id}</td></tr>
${record.parentId ? html`<tr><th>Parent</th><td><a href="${executionHref(record.parentId)}">${record.parentId}</a></td></tr>` : null}
<tr><th>Created</th><td>${at(record.createdAt)}</td></tr><tr><th>Updated</th><td>${at(record.updatedAt)}</td></tr>
${record.completedAt ? html`<tr><th>Finished</th><td>${at(record.completedAt)}</td></tr>` : null}
${record.wakeAt && waiting ? html`<tr><th>Wakes at</th><td>${at(record.wakeAt)}</td></tr>` : null}
${cancellationRows(record, clock)}
${pauseRows(record, clock)}
</tbody></table></section>
${waits.length > 0 ? waitsSection(waits, record.hold, clock.zone) : null}
${keyQueueSection(data.keyQueue ?? [], clock)}
${progressSection(record.progress)}
${inputOutputSection(data.activity)}
${failureSection(record.failure)}${holdSection(record)}
${approvalsSection(waits, data, may("approve"), clock)}
${fundingSection(waits, clock)}
${may("readPayloads") ? feeBumpsSection(record.workflow, data.journal) : null}
${timelineSection(data, may("readPayloads"))}
${familySection(data.activity)}
${signalsSection(data.activity, clock)}
${auditSection(data.activity, clock)}
${may("evidence") ? evidenceSection(record.id, data.evidenceSigned === true) : null}
${resetsSection(data.resets ?? [], clock)}
${may("reset") ? resetForm(record, data.user, data.journal.length) : null}
${actionsSection(record, data.user, {
  signal: may("signal"),
  cancel: may("cancel"),
  resume: may("resume"),
  pause: may("pause"),
})}`;
}

/** When a cancellation was asked for, by whom (the key's subject and name) and why. */
function cancellationRows(record: ExecutionRecord, clock: ConsoleClock): Html | null {
  if (!record.cancelRequestedAt) return null;
  const by = record.cancelRequestedBy;
  return html`<tr><th>Cancel requested</th><td>${timeCell(record.cancelRequestedAt, clock)}</td></tr>
<tr><th>Cancelled by</th><td>${by ? `${by.subject} (key ${by.name}, ${by.role})` : "not recorded"}</td></tr>
<tr><th>Reason</th><td>${record.cancelReason ?? "none given"}</td></tr>`;
}

/** While paused: since when, by whom (the key's subject and name) and why. */
function pauseRows(record: ExecutionRecord, clock: ConsoleClock): Html | null {
  const pause = record.paused;
  if (!pause || record.status === "completed" || record.status === "failed") return null;
  const by = pause.by;
  return html`<tr><th>Paused</th><td>${timeCell(pause.at, clock)}</td></tr>
<tr><th>Paused by</th><td>${by ? `${by.subject} (key ${by.name}, ${by.role})` : "not recorded"}</td></tr>
<tr><th>Pause reason</th><td>${pause.reason ?? "none given"}</td></tr>`;
}

function waitsSection(waits: readonly WaitDescriptor[], hold: ExecutionRecord["hold"], zone: string): Html {
  return html`<section aria-label="Waiting for"><h2>Waiting for</h2><ul>${waits.map(
    (w) => html`<li>${describeWait(w, hold, zone)}</li>`,
  )}</ul></section>`;
}

function progressSection(progress: Record<string, unknown> | null): Html | null {
  if (!progress) return null;
  const done = Number(progress.done);
  const total = Number(progress.total);
  const bar =
    Number.isFinite(done) && Number.isFinite(total) && total > 0
      ? html`<progress value="${done}" max="${total}">${done} of ${total}</progress> ${done} of ${total}`
      : null;
  return html`<section><h2>Progress</h2>${bar}${jsonBlock(progress)}</section>`;
}

function failureSection(failure: ExecutionRecord["failure"]): Html | null {
  if (!failure) return null;
  return html`<section class="alert" aria-label="Failure"><h2>Failure: ${failure.code}</h2><p>${failure.message}</p>
<p><strong>${failure.retryable ? "Retryable" : "Not retryable"}.</strong> ${failureGuidance(failure)}</p>
${failure.details && Object.keys(failure.details).length > 0 ? jsonBlock(failure.details) : null}</section>`;
}

/** A hold is not a failure: what does not replay, and the commands that end it (src/api/executions/guidance.ts). */
function holdSection(record: ExecutionRecord): Html | null {
  const { hold } = record;
  if (!hold) return null;
  return html`<section class="alert" aria-label="Held"><h2>Held: ${hold.code}</h2><p>${hold.message}</p>
<p><strong>What to do.</strong> ${holdGuidance(record.id, hold)}</p>
${hold.details && Object.keys(hold.details).length > 0 ? jsonBlock(hold.details) : null}</section>`;
}

function approvalsSection(
  waits: readonly WaitDescriptor[],
  data: ExecutionPageData,
  mayApprove: boolean,
  clock: ConsoleClock,
): Html | null {
  const pending = waits.filter((w) => w.kind === "approval" && w.position !== undefined);
  if (pending.length === 0 && data.votes.length === 0) return null;
  return html`<section aria-label="Approvals"><h2>Approvals</h2>
${pending.map((w) => {
  const details = w.details as unknown as ApprovalWaitDetails;
  return html`<h3>${w.name} (quorum ${details.quorum}${w.until ? html`, until ${timeCell(w.until, clock)}` : ""})</h3>
<p>Parameters you approve:</p>${jsonBlock(details.params)}<p>Hash: <code data-params-hash>${details.paramsHash}</code></p>
${
  mayApprove
    ? html`<form method="post" action="${executionHref(data.record.id)}/approve">
<input type="hidden" name="csrf" value="${data.user.csrf}"><input type="hidden" name="name" value="${w.name}">
<input type="hidden" name="paramsHash" value="${details.paramsHash}">
<label for="reason-${w.name}">Reason</label><input id="reason-${w.name}" name="reason" maxlength="2000">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="reject">Reject</button></form>`
    : html`<p>Only approvers may vote.</p>`
}`;
})}
${
  data.votes.length > 0
    ? html`<table><thead><tr><th>Approval</th><th>Decision</th><th>Who</th><th>When</th><th>Parameters hash</th><th>Reason</th></tr></thead><tbody>
${data.votes.map(
  (
    v,
  ) => html`<tr><td>${v.name}</td><td>${v.decision}</td><td>${v.approver.name} (${v.subject}, ${v.approver.role})</td>
<td>${timeCell(v.approver.at, clock)}</td><td><code>${v.paramsHash}</code></td><td>${v.reason ?? ""}</td></tr>`,
)}</tbody></table>`
    : null
}</section>`;
}

/** The run's own funding waits, and those of children it waits for (src/api/executions/child-funding.ts). */
function fundingSection(waits: readonly WaitDescriptor[], clock: ConsoleClock): Html | null {
  const funding = waits.filter((w) => w.kind === "funding");
  const children = waits.flatMap((w) => childFundingOf(w) ?? []);
  if (funding.length === 0 && children.length === 0) return null;
  return html`<section aria-label="Funding requests"><h2>Funding requests</h2>${funding.map(
    (w) =>
      html`<h3>${w.name}${w.until ? html` (deadline ${timeCell(w.until, clock)})` : ""}</h3>${jsonBlock(w.details ?? {})}`,
  )}${children.map(
    (
      f,
    ) => html`<h3>gas for <a href="${executionHref(f.executionId)}">${f.workflow} ${f.executionId}</a> (deadline ${f.deadline ? timeCell(f.deadline, clock) : "none"})</h3>
<p data-child-funding>${childFundingSummary(f)}</p>${jsonBlock(f)}`,
  )}</section>`;
}

function timelineSection(data: ExecutionPageData, withPayloads: boolean): Html {
  const timings = stepTimings(data.journal, data.record);
  const steps = data.journal.map((entry) => toStep(entry, withPayloads, timings.get(entry.position)));
  const origin = steps[0] ? Date.parse(steps[0].startedAt) : 0;
  const longest = Math.max(1, ...steps.map((s) => s.durationMs ?? 0));
  return html`<section aria-label="Journal"><h2>Journal</h2>
<table><thead><tr><th>#</th><th>Kind</th><th>Name</th><th>State</th><th>Attempts</th><th>At</th><th>Duration</th><th></th>${
    withPayloads ? html`<th>Result</th>` : null
  }</tr></thead><tbody>
${steps.map(
  (
    s,
  ) => html`<tr><td>${s.position}</td><td>${s.kind}</td><td>${s.name}</td><td>${s.state}${s.errorCode ? ` ${s.errorCode}` : ""}</td>
<td>${s.attempts}</td><td>+${duration(Date.parse(s.startedAt) - origin)}</td><td>${s.durationMs === null ? "waiting" : duration(s.durationMs)}</td>
<td style="width:12rem"><div class="bar" style="width:${Math.round(((s.durationMs ?? 0) / longest) * 100)}%"></div></td>
${withPayloads ? html`<td>${stepPayload(s.error ?? s.result ?? null)}</td>` : null}</tr>`,
)}</tbody></table>${steps.length === 0 ? html`<p>Nothing journaled yet.</p>` : null}</section>`;
}

/** A journal payload, whole: the first line shows, the rest folds open. */
function stepPayload(value: unknown): Html {
  const text = JSON.stringify(value);
  if (text.length <= 80) return html`<code>${text}</code>`;
  return html`<details><summary><code>${text.slice(0, 80)}…</code></summary><pre data-payload>${JSON.stringify(value, null, 2)}</pre></details>`;
}

/** The signed export's download, for the roles that may take it (docs/console.md, "Evidence export"). */
function evidenceSection(id: string, signed: boolean): Html {
  return html`<section aria-label="Evidence"><h2>Evidence</h2>${
    signed
      ? html`<p><a href="${executionHref(id)}/evidence" download>Download the signed evidence export</a>
(check it offline with <code>tenor verify &lt;file&gt;</code>).</p>`
      : html`<p>No evidence signing key is configured (<code>evidence.signingKey</code>).</p>`
  }</section>`;
}

function actionsSection(
  record: ExecutionRecord,
  user: ConsoleUser,
  may: { signal: boolean; cancel: boolean; resume: boolean; pause: boolean },
): Html | null {
  if (record.status === "completed" || record.status === "failed") return null;
  const csrf = html`<input type="hidden" name="csrf" value="${user.csrf}">`;
  const base = executionHref(record.id);
  const forms = [
    may.signal
      ? html`<form method="post" action="${base}/signal">${csrf}<label for="signal-name">Signal</label>
<input id="signal-name" name="name" required maxlength="200"> <label for="signal-payload">Payload (JSON)</label>
<input id="signal-payload" name="payload" value="null"> <button type="submit">Send signal</button></form>`
      : null,
    may.resume && record.status === "suspended"
      ? html`<form class="inline" method="post" action="${base}/resume">${csrf}<button type="submit">Resume now</button></form>`
      : null,
    may.pause && record.paused
      ? html`<form class="inline" method="post" action="${base}/unpause">${csrf}<button type="submit">Unpause</button></form>`
      : null,
    may.pause && !record.paused
      ? html`<form method="post" action="${base}/pause">${csrf}<label for="pause-reason">Reason</label>
<input id="pause-reason" name="reason" maxlength="${CANCEL_REASON_MAX}"> <button type="submit">Pause run</button></form>`
      : null,
    may.cancel
      ? html`<form method="post" action="${base}/cancel">${csrf}<label for="cancel-reason">Reason</label>
<input id="cancel-reason" name="reason" maxlength="${CANCEL_REASON_MAX}"> <button type="submit">Cancel run</button></form>`
      : null,
  ].filter((f) => f !== null);
  return forms.length === 0 ? null : html`<section aria-label="Actions"><h2>Actions</h2>${forms}</section>`;
}
