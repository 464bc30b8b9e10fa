import type { OperationFailure } from "../../store/pg-operations.js";
import type { toOperationResource } from "../operations/handlers.js";
import { CONSOLE_PATHS } from "./console-paths.js";
import { type ConsoleClock, timeCell } from "./console-time.js";
import { executionHref, statusBadge } from "./fragments.js";
import { type Html, html } from "./html.js";
import { hiddenFields, type OperationFormFields } from "./operation-form.js";

/**
 * The HTML of the console's operations pages (docs/console.md, "Bulk operations"): the list, one
 * operation with its progress and per-run failures, and the dry run's count to confirm. An
 * operation is drawn from its resource as the API answers it: its action and every parameter the
 * action carries are shown as they come, so a new action needs no change here.
 */

export type OperationView = ReturnType<typeof toOperationResource>;

export function operationHref(id: string): string {
  return `${CONSOLE_PATHS.operations}/${id}`;
}

/** The resource's fields that are not an action's parameters. */
const NOT_PARAMETERS = new Set([
  "id",
  "action",
  "filter",
  "status",
  "total",
  "succeeded",
  "failed",
  "pending",
  "createdBy",
  "abortRequestedBy",
  "abortRequestedAt",
  "createdAt",
  "updatedAt",
  "finishedAt",
]);

/** `workflow=demo.steps status=failed,held`: fields combine with AND. */
export function filterText(filter: object): string {
  return Object.entries(filter)
    .map(([name, value]) => `${name}=${Array.isArray(value) ? value.join(",") : String(value)}`)
    .join(" ");
}

/** The action's parameters as set (`reason`, `signal`, ...), each as JSON; unset ones are left out. */
export function parameterText(operation: Record<string, unknown>): string {
  return Object.entries(operation)
    .filter(([name, value]) => !NOT_PARAMETERS.has(name) && value !== null && value !== undefined)
    .map(([name, value]) => `${name}: ${JSON.stringify(value)}`)
    .join("; ");
}

function progressBar(o: OperationView): Html {
  const done = o.succeeded + o.failed;
  const percent = o.total === 0 ? 100 : Math.floor((done * 100) / o.total);
  return html`<div role="progressbar" aria-valuemin="0" aria-valuemax="${o.total}" aria-valuenow="${done}" aria-label="Runs done"><div class="bar" style="width:${percent}%"></div></div>`;
}

export function operationsTable(items: readonly OperationView[], clock: ConsoleClock): Html {
  if (items.length === 0) return html`<p>No operation yet.</p>`;
  return html`<table aria-label="Operations"><thead><tr><th>Operation</th><th>Action</th><th>Filter</th><th>Status</th>
<th>Progress</th><th>Created by</th><th>Created</th></tr></thead><tbody>
${items.map(
  (o) => html`<tr data-operation="${o.id}"><td><a href="${operationHref(o.id)}">${o.id}</a></td>
<td>${o.action}</td><td><code>${filterText(o.filter)}</code></td><td>${statusBadge(o.status)}</td>
<td>${o.succeeded + o.failed} of ${o.total} (${o.failed} failed)${progressBar(o)}</td>
<td>${o.createdBy.subject} (key ${o.createdBy.name})</td><td>${timeCell(o.createdAt, clock)}</td></tr>`,
)}</tbody></table>`;
}

/** One operation: what it does to which runs, how far it is, who asked, and the abort button. */
export function operationBody(
  o: OperationView,
  failures: { items: readonly OperationFailure[]; next: string | null },
  options: { clock: ConsoleClock; csrf: string; mayAbort: boolean },
): Html {
  const { clock } = options;
  const parameters = parameterText(o);
  return html`<section aria-label="Operation"><h2>${o.action} ${statusBadge(o.status)}</h2><table><tbody>
<tr><th>Action</th><td data-action>${o.action}</td></tr>
${parameters ? html`<tr><th>Parameters</th><td data-parameters><code>${parameters}</code></td></tr>` : null}
<tr><th>Runs</th><td><code>${filterText(o.filter)}</code> (the ${o.total} matched when it was created)</td></tr>
<tr><th>Progress</th><td data-progress>${o.succeeded + o.failed} of ${o.total} done: ${o.succeeded} succeeded,
${o.failed} failed, ${o.pending} pending${progressBar(o)}</td></tr>
<tr><th>Created</th><td>${timeCell(o.createdAt, clock)} by ${o.createdBy.subject} (key ${o.createdBy.name})</td></tr>
${o.abortRequestedBy ? html`<tr><th>Abort asked</th><td>${timeCell(o.abortRequestedAt, clock)} by ${o.abortRequestedBy.subject} (key ${o.abortRequestedBy.name})${o.status === "running" ? "; a runner stops it at its next pass" : null}</td></tr>` : null}
${o.finishedAt ? html`<tr><th>Finished</th><td>${timeCell(o.finishedAt, clock)}</td></tr>` : null}
</tbody></table>
${
  o.status === "running" && o.abortRequestedBy === null && options.mayAbort
    ? html`<form method="post" action="${operationHref(o.id)}/abort"><input type="hidden" name="csrf" value="${options.csrf}">
<button type="submit">Abort</button> The batch in progress finishes; the runs not yet acted on are left untouched.</form>`
    : null
}</section>
${failuresSection(o, failures, clock)}`;
}

function failuresSection(
  o: OperationView,
  failures: { items: readonly OperationFailure[]; next: string | null },
  clock: ConsoleClock,
): Html {
  if (failures.items.length === 0)
    return html`<section aria-label="Failures"><h2>Failures</h2><p>No run refused so far.</p></section>`;
  return html`<section aria-label="Failures"><h2>Failures</h2>
<table><thead><tr><th>Run</th><th>Code</th><th>Message</th><th>When</th></tr></thead><tbody>
${failures.items.map(
  (
    f,
  ) => html`<tr data-failure="${f.executionId}"><td><a href="${executionHref(f.executionId)}">${f.executionId}</a></td>
<td><code>${f.code}</code></td><td>${f.message}</td><td>${timeCell(f.at, clock)}</td></tr>`,
)}</tbody></table>
${failures.next ? html`<p><a href="${operationHref(o.id)}?failuresAfter=${failures.next}">More failures</a></p>` : null}</section>`;
}

/** The dry run's answer: how many runs match now, and the button that creates the operation. */
export function confirmSection(
  count: { action: string; filter: object; matched: number; maxItems: number },
  fields: OperationFormFields,
  csrf: string,
): Html {
  const what = html`<strong data-matched>${count.matched}</strong> runs match <code>${filterText(count.filter)}</code> now`;
  if (count.matched === 0)
    return html`<section role="status" aria-label="Count">${what}: there is nothing to ${count.action}.</section>`;
  if (count.matched > count.maxItems)
    return html`<section class="alert" role="alert" aria-label="Count">${what}: one operation acts on at most
${count.maxItems}; narrow the filter (by createdBefore, for example).</section>`;
  return html`<section role="status" aria-label="Count">${what}.
<form method="post" action="${CONSOLE_PATHS.operations}"><input type="hidden" name="csrf" value="${csrf}">${hiddenFields(fields)}
<button type="submit">Confirm: ${count.action} ${count.matched} runs</button></form>
<p>The runs matched when you confirm are the operation's; the count may have moved since.</p></section>`;
}
