import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import type { ResetHistory } from "../../store/pg-reset.js";
import { CANCEL_REASON_MAX } from "../executions/schemas.js";
import type { ConsoleUser } from "./console-auth.js";
import { type ConsoleClock, timeCell } from "./console-time.js";
import { executionHref } from "./fragments.js";
import { type Html, html } from "./html.js";

/**
 * Each reset of the run (docs/engine.md, "Reset"): who, when, why, from which position onto which
 * version, and the journal positions it set aside — kept for the record, no longer replayed.
 */
export function resetsSection(resets: readonly ResetHistory[], clock: ConsoleClock): Html | null {
  if (resets.length === 0) return null;
  return html`<section aria-label="Resets"><h2>Resets</h2>${resets.map(
    (r) => html`<h3>Reset at position ${r.position}, version ${r.fromVersion} → ${r.toVersion}</h3>
<table><tbody><tr><th>When</th><td>${timeCell(r.at, clock)}</td></tr>
<tr><th>By</th><td>${r.by ? `${r.by.subject} (key ${r.by.name}, ${r.by.role})` : "not recorded"}</td></tr>
<tr><th>Reason</th><td>${r.reason ?? "none given"}</td></tr>
<tr><th>Was</th><td>${r.fromStatus}</td></tr></tbody></table>
${
  r.entries.length === 0
    ? html`<p>Nothing was set aside: the newest version replays the whole journal.</p>`
    : html`<table aria-label="Set aside by this reset"><caption>Set aside (${r.setAside} positions, ${r.signalsReturned} signals given back)</caption>
<thead><tr><th>#</th><th>Kind</th><th>Name</th><th>State</th></tr></thead><tbody>${r.entries.map(
        (e) =>
          html`<tr class="set-aside"><td>${e.position}</td><td>${e.kind}</td><td>${e.name}</td><td>${e.state}</td></tr>`,
      )}</tbody></table>`
}`,
  )}</section>`;
}

/**
 * The reset form, for a run that stopped moving by itself (suspended, held or failed): the position
 * to continue from (a held run's hold names one; the journal's length otherwise) and the reason.
 */
export function resetForm(record: ExecutionRecord, user: ConsoleUser, journalLength: number): Html | null {
  if (record.status !== "suspended" && record.status !== "failed") return null;
  const held = (record.hold?.details as { position?: unknown } | undefined)?.position;
  const suggested = typeof held === "number" ? held : journalLength;
  return html`<section aria-label="Reset"><h2>Reset onto the newest version</h2>
<form method="post" action="${executionHref(record.id)}/reset"><input type="hidden" name="csrf" value="${user.csrf}">
<label for="reset-position">From position</label>
<input id="reset-position" name="position" type="number" min="0" max="${String(journalLength)}" value="${String(suggested)}" required>
<label for="reset-reason">Reason</label>
<input id="reset-reason" name="reason" maxlength="${CANCEL_REASON_MAX}" required>
<button type="submit">Reset run</button></form>
<p>Positions from there on are set aside (kept, shown above once reset); the newest version must replay the ones before it.</p></section>`;
}
