import { type KeyQueueEntry, lineName, positionText } from "../executions/key-queue.js";
import { type ConsoleClock, timeCell } from "./console-time.js";
import { duration, executionHref } from "./fragments.js";
import { type Html, html } from "./html.js";

/**
 * The execution page's "Waiting in line" section (docs/console.md): per key line the run is queued
 * in, its position and who holds the key since when. A holder of the viewer's organisation links
 * to its page; one of another organisation is only named as such.
 */
export function keyQueueSection(entries: readonly KeyQueueEntry[], clock: ConsoleClock): Html | null {
  if (entries.length === 0) return null;
  return html`<section aria-label="Waiting in line"><h2>Waiting in line</h2><table>
<thead><tr><th>Line</th><th>Position</th><th>Held by</th><th>Holding since</th><th>Held for</th></tr></thead>
<tbody>${entries.map((entry) => lineRow(entry, clock))}</tbody></table></section>`;
}

function lineRow(entry: KeyQueueEntry, clock: ConsoleClock): Html {
  const h = entry.holder;
  const holder = !h
    ? "nobody at this moment (the line is moving)"
    : h.executionId
      ? html`${h.workflow} <a href="${executionHref(h.executionId)}">${h.executionId}</a>`
      : h.description;
  return html`<tr><td>${lineName(entry)}</td><td>${positionText(entry.position)}</td><td>${holder}</td>
<td>${h ? timeCell(h.since, clock) : ""}</td><td>${h ? duration(h.heldMs) : ""}</td></tr>`;
}
