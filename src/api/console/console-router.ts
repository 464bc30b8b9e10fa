import { type Request, type Response, Router } from "express";
import { z } from "zod";
import { TenorError } from "../../errors/tenor-error.js";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import type { BoardSessions } from "../admin/board-session.js";
import type { ApiDeps } from "../api-deps.js";
import { API_ERRORS } from "../api-error-codes.js";
import { voteAs } from "../approvals/routes.js";
import { VoteBodySchema } from "../approvals/schemas.js";
import { audited } from "../audit/audit-trail.js";
import { type Permission, roleMay } from "../auth/permissions.js";
import { buildEvidence, sendEvidence } from "../evidence/evidence-route.js";
import { activityOf } from "../executions/activity.js";
import { withChildFunding } from "../executions/child-funding.js";
import {
  cancelRun,
  checkSignalPayload,
  keyActor,
  refuseReservedSignal,
} from "../executions/command-routes.js";
import { keyQueueFor } from "../executions/key-queue.js";
import { pauseRun, unpauseRun } from "../executions/pause-routes.js";
import { requireExecution } from "../executions/read-routes.js";
import { resetRun } from "../executions/reset-route.js";
import { ResetBodySchema } from "../executions/reset-schemas.js";
import { resumeRun } from "../executions/resume-route.js";
import { CancelBodySchema } from "../executions/schemas.js";
import { handler, parseRequest } from "../http.js";
import { apiError, statusForCode } from "../problem.js";
import {
  CONSOLE_PATHS,
  type ConsoleUser,
  consoleForm,
  consoleHeaders,
  consoleSession,
  consoleSignInRouter,
  consoleUser,
} from "./console-auth.js";
import { consoleClock, consoleTimeZone, zoneHeader } from "./console-zone.js";
import { executionBody, NOTICES, type Notice } from "./execution-page.js";
import { executionHref } from "./fragments.js";
import { html, layout } from "./html.js";
import { listPage, whoOf } from "./list-page.js";
import { operationsPages } from "./operations-pages.js";
import { runnersPage } from "./runners-page.js";
import { schedulesPages } from "./schedules-page.js";
import { timeZonePage } from "./time-zone-page.js";

/**
 * The operator's web console at /console (docs/console.md): server-rendered pages, no scripts, for
 * people of one organisation signed in with one of its keys, and the platform's schedules page
 * for platform keys. Every action goes through the same functions as the API (votes, signals,
 * cancel, resume; pause, resume and trigger of a schedule), with the same role checks, and is
 * audited like the API's.
 */
export function consoleRouter(deps: ApiDeps, sessions: BoardSessions): Router {
  const router = Router();
  // The viewer's time zone for every console page: `?tz=` or its cookie (console-zone.ts).
  router.use(CONSOLE_PATHS.home, consoleTimeZone);
  router.use(consoleSignInRouter(deps.keys, sessions));
  // The platform's pages, for platform keys (src/api/console/schedules-page.ts).
  router.use(schedulesPages(deps, sessions));
  // The organisation's bulk operations (src/api/console/operations-pages.ts).
  router.use(operationsPages(deps, sessions));
  const signedIn = [consoleHeaders, ...consoleForm, consoleSession(deps.keys, sessions)];
  router.get(CONSOLE_PATHS.home, ...signedIn, handler(listPage(deps)));
  router.get(
    CONSOLE_PATHS.runners,
    consoleHeaders,
    consoleSession(deps.keys, sessions, "any"),
    handler(runnersPage(deps)),
  );
  router.get(
    CONSOLE_PATHS.timeZone,
    consoleHeaders,
    consoleSession(deps.keys, sessions, "any"),
    timeZonePage,
  );
  router.get(
    `${CONSOLE_PATHS.home}/executions/:id`,
    ...signedIn,
    handler(async (req, res) => {
      const record = await findOrRender(deps, req, res);
      if (!record) return;
      const notice =
        typeof req.query.notice === "string" && req.query.notice in NOTICES
          ? (req.query.notice as Notice)
          : null;
      await renderExecution(deps, res, record, null, notice, 200);
    }),
  );
  const action = (
    name: string,
    audit: Parameters<typeof audited>[1],
    target: (req: Request) => string,
    permission: Permission,
    run: (req: Request, record: ExecutionRecord, user: ConsoleUser) => Promise<Notice>,
  ) =>
    router.post(
      `${CONSOLE_PATHS.home}/executions/:id/${name}`,
      ...signedIn,
      audited(deps, audit, target),
      handler(async (req, res) => {
        const record = await findOrRender(deps, req, res);
        if (!record) return;
        const user = consoleUser(res);
        try {
          mayOrRefuse(user, permission);
          const notice = await run(req, record, user);
          res.redirect(303, `${executionHref(record.id)}?notice=${notice}`);
        } catch (error) {
          await renderRefusal(deps, res, user, record, error);
        }
      }),
    );
  const id = (req: Request) => String(req.params.id);
  // The signed evidence export as a download, built and audited as the API's (GET .../evidence).
  router.get(
    `${CONSOLE_PATHS.home}/executions/:id/evidence`,
    ...signedIn,
    audited(deps, "execution.evidence", id),
    handler(async (req, res) => {
      const record = await findOrRender(deps, req, res);
      if (!record) return;
      const user = consoleUser(res);
      try {
        mayOrRefuse(user, "evidence");
        sendEvidence(res, await buildEvidence(deps, user.principal.orgId, record));
      } catch (error) {
        await renderRefusal(deps, res, user, record, error);
      }
    }),
  );
  action(
    "approve",
    "approval.vote",
    (req) => `${id(req)}/approvals/${String(req.body?.name)}`,
    "approve",
    async (req, record, user) => {
      const { name } = parseRequest(z.object({ name: z.string().min(1).max(200) }), req.body ?? {}, "body");
      const vote = parseRequest(
        VoteBodySchema,
        {
          decision: req.body?.decision,
          paramsHash: req.body?.paramsHash,
          ...(typeof req.body?.reason === "string" && req.body.reason.trim() !== ""
            ? { reason: req.body.reason.trim() }
            : {}),
        },
        "body",
      );
      await voteAs(deps, user.principal, record, name, vote);
      return "voted";
    },
  );
  action(
    "signal",
    "execution.signal",
    (req) => `${id(req)}/signals/${String(req.body?.name)}`,
    "signal",
    async (req, record, user) => {
      const { name, payload } = parseRequest(
        z.object({ name: z.string().min(1).max(200), payload: z.string().max(65_536).default("null") }),
        req.body ?? {},
        "body",
      );
      refuseReservedSignal(name);
      let value: unknown;
      try {
        value = JSON.parse(payload);
      } catch (error) {
        throw apiError(API_ERRORS.REQUEST_INVALID, `the payload is not JSON: ${(error as Error).message}`);
      }
      checkSignalPayload(deps, record, name, value);
      await deps.client.signal(record.id, name, value, {
        orgId: user.principal.orgId,
        sentBy: keyActor(user.principal),
      });
      return "signalled";
    },
  );
  action("cancel", "execution.cancel", id, "cancel", async (req, record, user) => {
    await cancelRun(deps, user.principal, record, consoleCancelReason(req));
    return "cancelled";
  });
  action("resume", "execution.resume", id, "resume", async (_req, record, user) => {
    await resumeRun(deps, user.principal.orgId, record);
    return "resumed";
  });
  action("pause", "execution.pause", id, "pause", async (req, record, user) => {
    await pauseRun(deps, user.principal, record, consoleCancelReason(req));
    return "paused";
  });
  action("unpause", "execution.unpause", id, "pause", async (_req, record, user) => {
    await unpauseRun(deps, user.principal, record);
    return "unpaused";
  });
  action("reset", "execution.reset", id, "reset", async (req, record, user) => {
    const form = (req.body ?? {}) as Record<string, unknown>;
    const body = parseRequest(
      ResetBodySchema,
      {
        position:
          typeof form.position === "string" && form.position.trim() !== ""
            ? Number(form.position)
            : undefined,
        reason: typeof form.reason === "string" && form.reason.trim() !== "" ? form.reason.trim() : undefined,
      },
      "body",
    );
    await resetRun(deps, user.principal, record, { ...body, idempotencyKey: null });
    return "reset";
  });
  return router;
}

function mayOrRefuse(user: ConsoleUser, permission: Permission): void {
  if (roleMay(user.principal.role, permission)) return;
  throw apiError(API_ERRORS.FORBIDDEN, `role ${user.principal.role} may not ${permission}`, { permission });
}

/** The run's page again, with the refusal's code and message on top and the refusal's status. */
async function renderRefusal(
  deps: ApiDeps,
  res: Response,
  user: ConsoleUser,
  record: ExecutionRecord,
  error: unknown,
): Promise<void> {
  if (!(error instanceof TenorError)) throw error;
  res.locals.problemCode = error.code;
  const fresh = (await deps.reads.get(user.principal.orgId, record.id)) ?? record;
  await renderExecution(
    deps,
    res,
    fresh,
    { code: error.code, message: error.message },
    null,
    statusForCode(error.code),
  );
}

/** The cancel or pause form's reason, validated like the API's body; an empty field is no reason. */
function consoleCancelReason(req: Request): string | null {
  const raw = (req.body as Record<string, unknown> | undefined)?.reason;
  const body = typeof raw === "string" && raw.trim() !== "" ? { reason: raw } : {};
  return parseRequest(CancelBodySchema, body, "body").reason ?? null;
}

/** The organisation's execution named in the path, or a 404 page (another organisation's included). */
async function findOrRender(deps: ApiDeps, req: Request, res: Response): Promise<ExecutionRecord | null> {
  try {
    return await requireExecution(deps, req, res);
  } catch (error) {
    if (!(error instanceof TenorError)) throw error;
    res
      .status(404)
      .type("html")
      .send(
        layout({
          title: "Not found",
          home: CONSOLE_PATHS.home,
          who: whoOf(consoleUser(res)),
          timeZone: zoneHeader(res),
          body: html`<section class="alert" role="alert">${error.message}</section>`,
        }),
      );
    return null;
  }
}

async function renderExecution(
  deps: ApiDeps,
  res: Response,
  record: ExecutionRecord,
  alert: { code: string; message: string } | null,
  notice: Notice | null,
  status: number,
): Promise<void> {
  const user = consoleUser(res);
  const clock = consoleClock(res);
  const [journal, votes, activity, keyQueue, shown, resets] = await Promise.all([
    deps.client.journal(record.id, record.orgId),
    deps.approvals.list(record.orgId, record.id),
    activityOf(deps, user.principal, record),
    keyQueueFor(deps.keyLines, record),
    withChildFunding((orgId, id) => deps.reads.get(orgId, id), record),
    deps.reads.resets(record.orgId, record.id),
  ]);
  res
    .status(status)
    .type("html")
    .send(
      layout({
        title: `${record.workflow} ${record.id}`,
        home: CONSOLE_PATHS.home,
        who: whoOf(user),
        timeZone: zoneHeader(res),
        ...liveRefresh(record, keyQueue.length > 0),
        body: executionBody(
          {
            record: shown,
            journal,
            votes: votes ?? [],
            user,
            keyQueue,
            activity,
            resets,
            now: clock.now,
            zone: clock.zone,
            evidenceSigned: deps.evidenceKey !== undefined,
          },
          alert,
          notice,
        ),
      }),
    );
}

/**
 * A run that is not finished changes by itself (a step ends, a timer fires, a signal arrives), and
 * so does a place in a key's line, so its page reloads: often while running or in a key's line,
 * less often while it waits or is suspended, since it then holds forms a person may be filling in
 * (docs/console.md, "One execution").
 */
function liveRefresh(record: ExecutionRecord, inKeyLine: boolean): { refreshSeconds?: number } {
  if (record.status === "running" || inKeyLine) return { refreshSeconds: 3 };
  if (record.status === "waiting" || record.status === "suspended") return { refreshSeconds: 10 };
  return {};
}
