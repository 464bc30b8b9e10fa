import type { Request, Response } from "express";
import type { ApiDeps } from "../api-deps.js";
import type { Principal } from "../auth/authenticate.js";
import { familyOf } from "../executions/read-routes.js";
import { ExecutionStatusSchema, LIST_STATUSES, ListQuerySchema } from "../executions/schemas.js";
import { decodeCursor, encodeCursor } from "../list-cursor.js";
import { CONSOLE_PATHS, consoleUser } from "./console-auth.js";
import { timeCell } from "./console-time.js";
import { consoleClock, zoneHeader } from "./console-zone.js";
import { describeWaits, executionHref, statusBadge } from "./fragments.js";
import { Html, html, layout } from "./html.js";

/** How often the list reloads itself, in seconds: counts and statuses stay live without scripts. */
const LIST_REFRESH_SECONDS = 5;
const STATUSES = ExecutionStatusSchema.options;

/**
 * `GET /console`: the organisation's executions, newest first, filtered like `GET /v1/executions`
 * (workflow, status or `held`, failure code, key, created range, family: top-level runs unless
 * child runs are included or a parent named), 50 a page, with live counts per status of exactly
 * the runs the filter selects.
 */
export function listPage(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const user = consoleUser(res);
    const clock = consoleClock(res);
    const orgId = user.principal.orgId;
    const query = ListQuerySchema.safeParse(dropEmpty(req.query as Record<string, unknown>));
    const filter = query.success ? query.data : ListQuerySchema.parse({});
    // One selection for the rows and the counts beside them.
    const selection = {
      orgId,
      ...(filter.workflow !== undefined ? { workflow: filter.workflow } : {}),
      ...(filter.status !== undefined ? { status: filter.status } : {}),
      ...(filter.code !== undefined ? { code: filter.code } : {}),
      ...(filter.key !== undefined ? { key: filter.key } : {}),
      ...(filter.createdAfter !== undefined ? { createdAfter: filter.createdAfter } : {}),
      ...(filter.createdBefore !== undefined ? { createdBefore: filter.createdBefore } : {}),
      ...familyOf(filter),
    };
    const after = filter.cursor === undefined ? undefined : (decodeCursor(filter.cursor) ?? undefined);
    const [rows, totals] = await Promise.all([
      deps.reads.list({ ...selection, ...(after ? { after } : {}), limit: filter.limit + 1 }),
      deps.reads.countByStatus(selection),
    ]);
    const page = rows.slice(0, filter.limit);
    const last = page.at(-1);
    const next =
      rows.length > filter.limit && last
        ? `${CONSOLE_PATHS.home}?${new URLSearchParams({
            ...stringQuery(req.query as Record<string, unknown>),
            cursor: encodeCursor(last),
          })}`
        : null;
    const selected = new Set(filter.status ?? []);
    const body = html`
${query.success ? null : html`<section class="alert" role="alert">${query.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}</section>`}
<section class="counts" aria-label="Counts"><h2>${filter.parentId ? "Child runs" : filter.includeChildren ? "Runs and child runs" : "Top-level runs"} listed, by status</h2>
${STATUSES.map((s) => html`<span><span class="status ${s}">${s}</span> <strong data-count="${s}">${totals[s] ?? 0}</strong></span>`)}
</section>
<section><form method="get" action="${CONSOLE_PATHS.home}">
<label for="workflow">Workflow</label><input id="workflow" name="workflow" value="${filter.workflow ?? ""}">
<label for="status">Status</label><select id="status" name="status"><option value="">any</option>
${LIST_STATUSES.map((s) => html`<option value="${s}" ${selected.has(s) && selected.size === 1 ? new Html("selected") : null}>${s}</option>`)}</select>
<label for="code">Code</label><input id="code" name="code" value="${filter.code ?? ""}" placeholder="CANCELLED" maxlength="64">
<label for="key">Key</label><input id="key" name="key" value="${filter.key ?? ""}">
${filter.parentId ? html`<input type="hidden" name="parentId" value="${filter.parentId}">` : null}
<label><input type="checkbox" name="includeChildren" value="true" ${filter.includeChildren ? new Html("checked") : null}> Include child runs</label>
<button type="submit">Filter</button></form>
${filter.parentId ? html`<p data-parent-filter>Child runs of <a href="${executionHref(filter.parentId)}">${filter.parentId}</a></p>` : null}</section>
<table><thead><tr><th>Execution</th><th>Workflow</th><th>Status</th><th>Waiting for</th><th>Created</th><th>Updated</th></tr></thead><tbody>
${page.map(
  (
    e,
  ) => html`<tr><td><a href="${executionHref(e.id)}">${e.id}</a></td><td>${e.workflow}@${e.workflowVersion}</td>
<td>${statusBadge(e.status)}</td><td>${describeWaits(e, clock.zone)}</td><td>${timeCell(e.createdAt, clock)}</td><td>${timeCell(e.updatedAt, clock)}</td></tr>`,
)}
</tbody></table>
${page.length === 0 ? html`<p>No executions match.</p>` : null}
${next ? html`<p><a href="${next}">Older executions</a></p>` : null}`;
    res.type("html").send(
      layout({
        title: "Executions",
        body,
        who: whoOf(user),
        refreshSeconds: LIST_REFRESH_SECONDS,
        home: CONSOLE_PATHS.home,
        timeZone: zoneHeader(res),
      }),
    );
  };
}

export function whoOf(user: { principal: Principal; csrf: string }) {
  return {
    name: user.principal.name,
    role: user.principal.role,
    orgId: user.principal.orgId,
    csrf: user.csrf,
    signOut: CONSOLE_PATHS.signOut,
  };
}

/** A filter form sends empty fields; the API's schema treats absent and empty differently. */
function dropEmpty(query: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== "" && v !== undefined));
}

function stringQuery(query: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(dropEmpty(query)).filter(([k, v]) => k !== "cursor" && typeof v === "string") as [
      string,
      string,
    ][],
  );
}
