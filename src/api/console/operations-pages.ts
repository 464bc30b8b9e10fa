import { type Request, type Response, Router } from "express";
import { z } from "zod";
import { TenorError } from "../../errors/tenor-error.js";
import type { BoardSessions } from "../admin/board-session.js";
import type { ApiDeps } from "../api-deps.js";
import { API_ERRORS } from "../api-error-codes.js";
import { audited, nameAuditTarget } from "../audit/audit-trail.js";
import { roleMay } from "../auth/permissions.js";
import { handler } from "../http.js";
import { pageAfter, pageOf } from "../list-cursor.js";
import {
  abortOperationAs,
  countOperation,
  findOperation,
  startOperation,
  toOperationResource,
} from "../operations/handlers.js";
import { apiError, statusForCode } from "../problem.js";
import {
  type ConsoleUser,
  consoleForm,
  consoleHeaders,
  consoleSession,
  consoleUser,
} from "./console-auth.js";
import { CONSOLE_PATHS } from "./console-paths.js";
import { consoleClock, zoneHeader } from "./console-zone.js";
import { type Html, html, layout } from "./html.js";
import { whoOf } from "./list-page.js";
import {
  type OperationFormFields,
  operationBodyOf,
  operationForm,
  operationFormFields,
} from "./operation-form.js";
import { confirmSection, operationBody, operationHref, operationsTable } from "./operations-render.js";

/** Operations shown a page, and failures shown on an operation's page. */
const PAGE_SIZE = 50;
const FAILURES_PAGE_SIZE = 100;
/** A running operation's page reloads itself this often, in seconds: its progress moves by itself. */
const RUNNING_REFRESH_SECONDS = 5;

const NOTICES = {
  created: "The operation was created: runners act on its runs in batches.",
  aborted: "Abort asked: the batch in progress finishes, the rest is left untouched.",
} as const;
type Notice = keyof typeof NOTICES;

const COUNT_PATH = `${CONSOLE_PATHS.operations}/count`;
const idOf = (req: Request) => String(req.params.id);
const UUID = z.uuid();

/**
 * The console's bulk operations (docs/console.md, "Bulk operations"), for the roles that may run
 * them (operator, admin): the list with a form for a new one, a dry-run count to confirm before
 * anything is created, an operation's progress and per-run failures, and its abort. Counting and
 * creating are audited as `operation.create`, aborting as `operation.abort`, as through the API,
 * refusals included.
 */
export function operationsPages(deps: ApiDeps, sessions: BoardSessions): Router {
  const router = Router();
  const signedIn = [consoleHeaders, ...consoleForm, consoleSession(deps.keys, sessions)];
  /**
   * A page for the roles that may run operations; a refusal is shown with its code and status,
   * and a refused form is shown again as it was filled in.
   */
  const page =
    (render: (req: Request, res: Response, user: ConsoleUser) => Promise<void>, form = false) =>
    async (req: Request, res: Response) => {
      const user = consoleUser(res);
      try {
        mayRunOperations(user);
        await render(req, res, user);
      } catch (error) {
        if (!(error instanceof TenorError)) throw error;
        res.locals.problemCode = error.code;
        const again = form && roleMay(user.principal.role, "operations");
        send(
          res,
          statusForCode(error.code),
          form ? "New operation" : "Operations",
          refusal(error),
          again ? newSection(user, operationFormFields(req.body)) : null,
        );
      }
    };

  router.get(
    CONSOLE_PATHS.operations,
    ...signedIn,
    handler(page((req, res, user) => listPage(deps, req, res, user))),
  );
  // The dry run: the count, and the button that creates exactly what was counted.
  router.post(
    COUNT_PATH,
    ...signedIn,
    audited(deps, "operation.create", () => "operations"),
    handler(
      page(async (req, res, user) => {
        const fields = operationFormFields(req.body);
        const count = await countOperation(deps, user.principal.orgId, operationBodyOf(fields));
        const confirm = confirmSection(count, fields, user.csrf);
        send(res, 200, "Confirm the operation", confirm, newSection(user, fields));
      }, true),
    ),
  );
  router.post(
    CONSOLE_PATHS.operations,
    ...signedIn,
    audited(deps, "operation.create", () => "operations"),
    handler(
      page(async (req, res, user) => {
        const body = operationBodyOf(operationFormFields(req.body));
        const created = await startOperation(deps, user.principal, body);
        nameAuditTarget(res, created.id);
        res.redirect(303, `${operationHref(created.id)}?notice=created`);
      }, true),
    ),
  );
  router.get(
    `${CONSOLE_PATHS.operations}/:id`,
    ...signedIn,
    handler(page((req, res, user) => detailPage(deps, req, res, user))),
  );
  router.post(
    `${CONSOLE_PATHS.operations}/:id/abort`,
    ...signedIn,
    audited(deps, "operation.abort", idOf),
    handler(
      page(async (req, res, user) => {
        const operation = await findOperation(deps, user.principal.orgId, operationId(req));
        await abortOperationAs(deps, user.principal, operation);
        res.redirect(303, `${operationHref(operation.id)}?notice=aborted`);
      }),
    ),
  );
  return router;
}

/** The operations pages are for the roles that may run operations: FORBIDDEN otherwise. */
function mayRunOperations(user: ConsoleUser): void {
  if (roleMay(user.principal.role, "operations")) return;
  throw apiError(API_ERRORS.FORBIDDEN, `role ${user.principal.role} may not operations`, {
    permission: "operations",
  });
}

function operationId(req: Request): string {
  const id = idOf(req);
  if (UUID.safeParse(id).success) return id;
  throw apiError(API_ERRORS.OPERATION_NOT_FOUND, `no operation ${JSON.stringify(id)}: not a UUID`, {
    operationId: id,
  });
}

async function listPage(deps: ApiDeps, req: Request, res: Response, user: ConsoleUser): Promise<void> {
  const cursor = typeof req.query.cursor === "string" ? req.query.cursor : undefined;
  const rows = await deps.operations.store.list(user.principal.orgId, PAGE_SIZE + 1, pageAfter(cursor));
  const { page, nextCursor } = pageOf(rows, PAGE_SIZE);
  send(
    res,
    200,
    "Operations",
    html`<section aria-label="Operations list"><h2>Operations, newest first</h2>
<p><a href="${CONSOLE_PATHS.operations}">Reload</a> to see their progress.</p>
${operationsTable(page.map(toOperationResource), consoleClock(res))}
${nextCursor ? html`<p><a href="${CONSOLE_PATHS.operations}?cursor=${nextCursor}">Older operations</a></p>` : null}</section>`,
    newSection(user, {}),
  );
}

async function detailPage(deps: ApiDeps, req: Request, res: Response, user: ConsoleUser): Promise<void> {
  const operation = await findOperation(deps, user.principal.orgId, operationId(req));
  const after = typeof req.query.failuresAfter === "string" ? req.query.failuresAfter : undefined;
  const rows = await deps.operations.store.failures(
    operation.id,
    FAILURES_PAGE_SIZE + 1,
    after !== undefined && UUID.safeParse(after).success ? after : undefined,
  );
  const items = rows.slice(0, FAILURES_PAGE_SIZE);
  const next = rows.length > FAILURES_PAGE_SIZE ? (items.at(-1)?.executionId ?? null) : null;
  const notice =
    typeof req.query.notice === "string" && req.query.notice in NOTICES ? (req.query.notice as Notice) : null;
  const body = html`${notice ? html`<section role="status">${NOTICES[notice]}</section>` : null}
${operationBody(
  toOperationResource(operation),
  { items, next },
  { clock: consoleClock(res), csrf: user.csrf, mayAbort: roleMay(user.principal.role, "operations") },
)}
<p><a href="${CONSOLE_PATHS.operations}">Every operation</a></p>`;
  send(res, 200, `Operation ${operation.id}`, body, null, operation.status === "running");
}

function newSection(user: ConsoleUser, fields: OperationFormFields): Html {
  return html`<section aria-label="New operation"><h2>New operation</h2>
${operationForm(COUNT_PATH, user.csrf, fields)}</section>`;
}

function refusal(error: TenorError): Html {
  return html`<section class="alert" role="alert"><strong>${error.code}</strong>: ${error.message}</section>`;
}

function send(
  res: Response,
  status: number,
  title: string,
  body: Html,
  more: Html | null = null,
  live = false,
): void {
  res
    .status(status)
    .type("html")
    .send(
      layout({
        title,
        home: CONSOLE_PATHS.home,
        who: whoOf(consoleUser(res)),
        timeZone: zoneHeader(res),
        ...(live ? { refreshSeconds: RUNNING_REFRESH_SECONDS } : {}),
        body: html`${body}${more}`,
      }),
    );
}
