import type { z } from "zod";
import type { Activity } from "../executions/activity.js";
import type { PayloadSchema } from "../executions/activity-schemas.js";
import { type ConsoleClock, timeCell } from "./console-time.js";
import { executionHref, statusBadge } from "./fragments.js";
import { type Html, html } from "./html.js";

/**
 * The console's view of a run's activity resource (src/api/executions/activity.ts): input and
 * output, parent and children, signals delivered, audit entries. Payloads are whole, folded in a
 * `<details>`; a role that may not read them sees their size and hash (docs/console.md).
 */

/** A payload: its size and hash, and the whole JSON folded when the reader may see it. */
export function payloadCell(payload: z.infer<typeof PayloadSchema>): Html {
  const size = html`${payload.bytes} bytes, sha256 <code>${payload.sha256.slice(0, 12)}…</code>`;
  if (!("value" in payload)) return html`<span data-payload-hidden>${size}</span>`;
  return html`<details><summary>${size}</summary><pre data-payload>${JSON.stringify(payload.value, null, 2)}</pre></details>`;
}

export function inputOutputSection(activity: Activity): Html {
  return html`<section aria-label="Input and output"><h2>Input and output</h2><table><tbody>
<tr><th>Input</th><td>${payloadCell(activity.input)}</td></tr>
${activity.output ? html`<tr><th>Output</th><td>${payloadCell(activity.output)}</td></tr>` : null}
</tbody></table>${
    activity.payloadsIncluded
      ? null
      : html`<p>Payloads are shown to operators and admins; you see their size and hash.</p>`
  }</section>`;
}

/** The parent run (workflow and status) and the child runs this one started. */
export function familySection(activity: Activity): Html | null {
  const { parent, children } = activity;
  if (!parent && children.items.length === 0) return null;
  const link = (r: { id: string; workflow: string; status: string }) =>
    html`<a href="${executionHref(r.id)}">${r.workflow} ${r.id}</a> ${statusBadge(r.status)}`;
  return html`<section aria-label="Parent and children"><h2>Parent and children</h2>
${parent ? html`<p>Started by <span data-parent>${link(parent)}</span></p>` : null}
${
  children.items.length > 0
    ? html`<ul data-children>${children.items.map((c) => html`<li>${link(c)}</li>`)}</ul>${
        children.more
          ? html`<p><a href="/console?parentId=${activity.executionId}">Every child run</a></p>`
          : null
      }`
    : null
}</section>`;
}

export function signalsSection(activity: Activity, clock: ConsoleClock): Html | null {
  if (activity.signals.length === 0) return null;
  return html`<section aria-label="Signals"><h2>Signals delivered</h2>
<table><thead><tr><th>Name</th><th>Sent by</th><th>When</th><th>Taken at</th><th>Payload</th></tr></thead><tbody>
${activity.signals.map(
  (s) => html`<tr><td>${s.kind === "approval" ? `approval ${s.name}` : s.name}</td>
<td>${s.sentBy ? `${s.sentBy.subject} (key ${s.sentBy.name}, ${s.sentBy.role})` : s.kind === "approval" ? "its votes" : "not recorded"}</td>
<td>${timeCell(s.at, clock)}</td><td>${s.consumedPosition === null ? "not yet" : `position ${s.consumedPosition}`}</td>
<td>${payloadCell(s.payload)}</td></tr>`,
)}</tbody></table></section>`;
}

export function auditSection(activity: Activity, clock: ConsoleClock): Html | null {
  if (!activity.auditIncluded || activity.audit.length === 0) return null;
  return html`<section aria-label="Audit"><h2>Audit</h2>
<table><thead><tr><th>When</th><th>Action</th><th>Who</th><th>Target</th><th>Outcome</th></tr></thead><tbody>
${activity.audit.map(
  (a) => html`<tr><td>${timeCell(a.at, clock)}</td><td>${a.action}</td><td>${a.subject} (${a.role})</td>
<td>${a.target}</td><td>${a.outcome}</td></tr>`,
)}</tbody></table></section>`;
}
