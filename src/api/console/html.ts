import { CONSOLE_PATHS } from "./console-paths.js";
/**
 * Server-rendered HTML for the console: a tagged template that escapes every interpolated value
 * unless it is already Html, and the page layout. No scripts, no external assets.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return "";
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join("");
  return escapeHtml(part);
}

/** `html\`<p>${value}</p>\``: values are escaped; Html values and lists of them are inserted as they are. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let text = strings[0] ?? "";
  values.forEach((value, i) => {
    text += render(value) + (strings[i + 1] ?? "");
  });
  return new Html(text);
}

/** Pretty JSON in a <pre>, escaped. */
export function jsonBlock(value: unknown): Html {
  return html`<pre>${JSON.stringify(value, null, 2)}</pre>`;
}

const STYLE = `
body{font-family:system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{background:#1b2a41;color:#fff;padding:.6rem 1.2rem;display:flex;gap:1rem;align-items:center}
header a{color:#fff}header nav{margin-right:auto}header .who,header .zone{font-size:.9rem}
main{padding:1rem 1.2rem;max-width:78rem}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border-bottom:1px solid #dde1e6;padding:.35rem .5rem;text-align:left;vertical-align:top;font-size:.9rem}
th{background:#eef1f4}
pre{background:#fff;border:1px solid #dde1e6;padding:.5rem;overflow:auto;font-size:.85rem;margin:.3rem 0}
section{background:#fff;border:1px solid #dde1e6;border-radius:4px;padding:.6rem .9rem;margin:.8rem 0}
h2{font-size:1.05rem;margin:.2rem 0 .5rem}
.status{display:inline-block;padding:.1rem .5rem;border-radius:3px;font-weight:600;font-size:.85rem}
.running{background:#dbeafe}.waiting{background:#fef3c7}.suspended{background:#fde2cf}
.completed{background:#d1fae5}.failed{background:#fee2e2}
.ok{background:#d1fae5}.pending{background:#fef3c7}.paused{background:#e5e7eb}
.failing,.overdue,.stopped{background:#fee2e2}
.counts span{margin-right:1rem}.alert{background:#fee2e2;border-color:#f5a3a3}
.bar{background:#7aa2d6;height:.6rem;min-width:2px}
form.inline{display:inline-block;margin-right:.6rem}
label{margin-right:.3rem}
`;

/** The page around every console view. `refreshSeconds` reloads it (live counts and statuses). */
export function layout(options: {
  title: string;
  body: Html;
  /** The signed-in key; `orgId` null for a platform key. */
  who?: { name: string; role: string; orgId: string | null; csrf: string; signOut: string };
  refreshSeconds?: number;
  home: string;
  /** The zone the page's times are in and the link to change it (src/api/console/console-zone.ts). */
  timeZone?: { zone: string; change: string };
}): string {
  const { who } = options;
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Tenor console: ${options.title}</title>
${options.refreshSeconds ? new Html(`<meta http-equiv="refresh" content="${options.refreshSeconds}">`) : null}
<style>${new Html(STYLE)}</style></head><body>
<header><strong><a href="${options.home}">Tenor console</a></strong>
${
  who
    ? html`<nav>${who.orgId === null ? html`<a href="${CONSOLE_PATHS.schedules}">Schedules</a>` : html`<a href="${CONSOLE_PATHS.home}">Executions</a>`}
${who.orgId === null ? null : html`<a href="${CONSOLE_PATHS.operations}">Operations</a>`}
<a href="${CONSOLE_PATHS.runners}">Runners</a></nav>`
    : null
}
${
  options.timeZone
    ? html`<span class="zone">Times in <strong data-zone>${options.timeZone.zone}</strong>
<a href="${options.timeZone.change}">change</a></span>`
    : null
}
${
  who
    ? html`<span class="who">${who.name} (${who.role}, ${who.orgId === null ? "platform" : `org ${who.orgId}`})
<form class="inline" method="post" action="${who.signOut}"><input type="hidden" name="csrf" value="${who.csrf}">
<button type="submit">Sign out</button></form></span>`
    : null
}</header>
<main><h1>${options.title}</h1>${options.body}</main></body></html>`.text;
}
