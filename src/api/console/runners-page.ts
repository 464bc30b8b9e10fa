import type { Request, Response } from "express";
import type { ApiDeps } from "../api-deps.js";
import { readReplicasStatus } from "../platform/replicas-status.js";
import { CONSOLE_PATHS, consoleUser } from "./console-auth.js";
import { timeCell } from "./console-time.js";
import { consoleClock, zoneHeader } from "./console-zone.js";
import { duration } from "./fragments.js";
import { html, layout } from "./html.js";
import { whoOf } from "./list-page.js";

/** The runners page reloads itself this often, in seconds: a runner that dies shows within one. */
const RUNNERS_REFRESH_SECONDS = 5;

/**
 * `GET /console/runners`: who is alive (docs/console.md, "Runners"), the same view as the platform
 * status's `replicas` and `tenor runners`: every runner and indexer with its last heartbeat, the
 * shards it owns and its turns in use, and an alert when no runner is live or a shard has no owner.
 */
export function runnersPage(deps: ApiDeps) {
  return async (_req: Request, res: Response): Promise<void> => {
    const clock = consoleClock(res);
    const status = await readReplicasStatus(deps.replicas, deps.shardCount, deps.chainIds.length > 0);
    const alerts = [
      ...(status.live.runner === 0 ? ["No live runner: no execution advances until one starts."] : []),
      ...status.shards
        .filter((s) => s.unowned.length > 0)
        .map((s) => `${s.unowned.length} of ${s.shardCount} ${s.role} shards have no owner.`),
    ];
    const body = html`
${alerts.map((alert) => html`<section class="alert" role="alert">${alert}</section>`)}
<section class="counts" aria-label="Live replicas"><h2>Live</h2>
<span>runners <strong data-live="runner">${status.live.runner}</strong></span>
<span>indexers <strong data-live="indexer">${status.live.indexer}</strong></span>
${status.shards.map((s) => html`<span>${s.role} shards owned <strong data-owned="${s.role}">${s.shardCount - s.unowned.length}/${s.shardCount}</strong></span>`)}
</section>
<table><thead><tr><th>Role</th><th>Replica</th><th>Live</th><th>Started</th><th>Last heartbeat</th><th>Shards</th><th>Turns in use</th><th>Workflows</th></tr></thead><tbody>
${status.instances.map(
  (r) => html`<tr data-replica="${r.id}"><td>${r.role}</td><td>${r.id}</td>
<td><span class="status ${r.live ? "completed" : "failed"}">${r.live ? "live" : "not live"}</span></td>
<td>${timeCell(r.startedAt, clock)}</td>
<td><time datetime="${r.lastHeartbeatAt}">${duration(r.heartbeatAgeMs)} ago</time></td>
<td title="${r.shards.join(", ")}">${r.shards.length}</td>
<td>${r.capacity === null ? "" : `${r.busy ?? 0} of ${r.capacity}`}</td>
<td>${r.workflows.join(", ")}</td></tr>`,
)}
</tbody></table>
${status.instances.length === 0 ? html`<p>No runner or indexer has reported in the last hour.</p>` : null}`;
    res.type("html").send(
      layout({
        title: "Runners",
        body,
        who: whoOf(consoleUser(res)),
        refreshSeconds: RUNNERS_REFRESH_SECONDS,
        home: CONSOLE_PATHS.home,
        timeZone: zoneHeader(res),
      }),
    );
  };
}
