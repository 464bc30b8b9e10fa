import { type Response, Router } from "express";
import { TenorError } from "../../errors/tenor-error.js";
import type { AuditAction } from "../../store/pg-audit.js";
import type { BoardSessions } from "../admin/board-session.js";
import type { ApiDeps } from "../api-deps.js";
import { API_ERRORS } from "../api-error-codes.js";
import { audited } from "../audit/audit-trail.js";
import { roleMay } from "../auth/permissions.js";
import { handler } from "../http.js";
import { changeSchedule, scheduleJson, triggerSchedule } from "../platform/schedule-routes.js";
import { apiError, statusForCode } from "../problem.js";
import {
  CONSOLE_PATHS,
  consoleForm,
  consoleHeaders,
  consoleSession,
  type PlatformConsoleUser,
  platformConsoleUser,
} from "./console-auth.js";
import { timeCell } from "./console-time.js";
import { consoleClock, zoneHeader } from "./console-zone.js";
import { duration, statusBadge } from "./fragments.js";
import { type Html, html, layout } from "./html.js";
import { whoOf } from "./list-page.js";

/** Notices a schedule action leaves on the page it redirects to: a closed list, never request text. */
const NOTICES = {
  paused: "The schedule is paused: its ticks do nothing until it is resumed.",
  resumed: "The schedule is resumed: runners restore its job scheduler within seconds.",
  triggered: "A tick was queued: a runner runs it now.",
} as const;
type Notice = keyof typeof NOTICES;

const ACTIONS: Record<"pause" | "resume" | "trigger", { audit: AuditAction; notice: Notice }> = {
  pause: { audit: "schedule.pause", notice: "paused" },
  resume: { audit: "schedule.resume", notice: "resumed" },
  trigger: { audit: "schedule.trigger", notice: "triggered" },
};

/**
 * The platform's page of the console (docs/console.md, "Web console"): every runner schedule with
 * its cadence, next run, last run and pause, for platform keys; platform-admin gets pause, resume
 * and trigger buttons, which run the API's own functions with its role check and audit entries.
 */
export function schedulesPages(deps: ApiDeps, sessions: BoardSessions): Router {
  const router = Router();
  const signedIn = [consoleHeaders, ...consoleForm, consoleSession(deps.keys, sessions, "platform")];
  router.get(
    CONSOLE_PATHS.schedules,
    ...signedIn,
    handler(async (req, res) => {
      const notice =
        typeof req.query.notice === "string" && req.query.notice in NOTICES ? req.query.notice : null;
      await renderSchedules(deps, res, null, notice as Notice | null, 200);
    }),
  );
  for (const [action, { audit, notice }] of Object.entries(ACTIONS) as [
    keyof typeof ACTIONS,
    (typeof ACTIONS)["pause"],
  ][]) {
    router.post(
      `${CONSOLE_PATHS.schedules}/:name/${action}`,
      ...signedIn,
      audited(deps, audit, (req) => String(req.params.name)),
      handler(async (req, res) => {
        const user = platformConsoleUser(res);
        const name = String(req.params.name);
        const actor = { subject: user.principal.subject, keyId: user.principal.keyId };
        try {
          if (!roleMay(user.principal.role, "schedulesManage")) {
            throw apiError(API_ERRORS.FORBIDDEN, `role ${user.principal.role} may not schedulesManage`, {
              permission: "schedulesManage",
            });
          }
          if (action === "trigger") await triggerSchedule(deps, name, actor);
          else await changeSchedule(deps, action, name, actor);
          res.redirect(303, `${CONSOLE_PATHS.schedules}?notice=${notice}`);
        } catch (error) {
          if (!(error instanceof TenorError)) throw error;
          res.locals.problemCode = error.code;
          await renderSchedules(
            deps,
            res,
            { code: error.code, message: error.message },
            null,
            statusForCode(error.code),
          );
        }
      }),
    );
  }
  return router;
}

async function renderSchedules(
  deps: ApiDeps,
  res: Response,
  alert: { code: string; message: string } | null,
  notice: Notice | null,
  status: number,
): Promise<void> {
  const user = platformConsoleUser(res);
  const clock = consoleClock(res);
  const schedules = (await deps.schedules.list()).map(scheduleJson);
  const manage = roleMay(user.principal.role, "schedulesManage");
  const body = html`
${alert ? html`<section class="alert" role="alert"><strong>${alert.code}</strong>: ${alert.message}</section>` : null}
${notice ? html`<section role="status">${NOTICES[notice]}</section>` : null}
<p>Platform-wide. <a href="${CONSOLE_PATHS.schedules}">Reload</a> to see runs that finished since.
${manage ? null : html` Only platform-admin may pause, resume or trigger.`}</p>
<table aria-label="Schedules"><thead><tr><th>Schedule</th><th>State</th><th>Cadence</th><th>Next run</th>
<th>Last attempt</th><th>Outcome</th><th>Duration</th><th>Failures</th><th>Last error</th><th>Paused</th>
${manage ? html`<th>Actions</th>` : null}</tr></thead><tbody>
${schedules.map(
  (s) => html`<tr data-schedule="${s.name}"><td>${s.name}</td><td>${statusBadge(s.state)}</td>
<td title="${s.cadenceMs} ms">${s.cadenceText}</td><td>${timeCell(s.nextRunAt, clock)}</td><td>${s.lastAttemptAt === null ? "never" : timeCell(s.lastAttemptAt, clock)}</td>
<td>${s.lastOutcome ?? ""}</td><td>${duration(s.lastDurationMs)}</td><td>${s.consecutiveFailures}</td>
<td>${s.lastError ?? ""}</td><td>${s.paused ? html`${timeCell(s.paused.at, clock)} by ${s.paused.by ?? "?"}` : ""}</td>
${manage ? html`<td>${actionForms(s.name, s.paused !== null, user)}</td>` : null}</tr>`,
)}
</tbody></table>
${schedules.length === 0 ? html`<p>No schedule is registered yet: no runner has started.</p>` : null}`;
  res
    .status(status)
    .type("html")
    .send(
      layout({
        title: "Schedules",
        home: CONSOLE_PATHS.schedules,
        who: whoOf(user),
        timeZone: zoneHeader(res),
        body,
      }),
    );
}

function actionForms(name: string, paused: boolean, user: PlatformConsoleUser): Html {
  const csrf = html`<input type="hidden" name="csrf" value="${user.csrf}">`;
  const base = `${CONSOLE_PATHS.schedules}/${encodeURIComponent(name)}`;
  const form = (action: string, label: string) =>
    html`<form class="inline" method="post" action="${base}/${action}">${csrf}<button type="submit" aria-label="${label} ${name}">${label}</button></form>`;
  return html`${paused ? form("resume", "Resume") : form("pause", "Pause")}${paused ? null : form("trigger", "Trigger now")}`;
}
