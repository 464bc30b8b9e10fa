import express, {
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
  Router,
} from "express";
import { isPlatformRole } from "../../auth/api-roles.js";
import type { ApiKeyRecord, PgApiKeys } from "../../store/pg-api-keys.js";
import {
  type BoardSessions,
  type SessionCookieSpec,
  sameOrigin,
  sessionCookie,
  sessionToken,
} from "../admin/board-session.js";
import { signInPageHeaders } from "../admin/sign-in.js";
import { hashApiKey } from "../auth/api-key.js";
import { type OrgPrincipal, type Principal, toPrincipal } from "../auth/authenticate.js";
import { roleMay } from "../auth/permissions.js";
import { storableBody } from "../http.js";
import { CONSOLE_PATHS } from "./console-paths.js";
import { html, layout } from "./html.js";

export { CONSOLE_PATHS } from "./console-paths.js";

/** The console's session cookie: sessions are the board's (src/api/admin/board-session.ts), the cookie is its own. */
export const CONSOLE_COOKIE: SessionCookieSpec = { name: "tenor_console", path: CONSOLE_PATHS.home };

/** What a console handler knows about the person: their organisation principal and the session's CSRF token. */
export interface ConsoleUser {
  principal: OrgPrincipal;
  csrf: string;
}

export function consoleUser(res: Response): ConsoleUser {
  return res.locals.consoleUser as ConsoleUser;
}

/** Who is on a platform page of the console: a platform key (no organisation). */
export interface PlatformConsoleUser {
  principal: Principal & { orgId: null };
  csrf: string;
}

export function platformConsoleUser(res: Response): PlatformConsoleUser {
  return res.locals.consoleUser as PlatformConsoleUser;
}

/**
 * Which pages a session may open: an organisation's (its executions) or the platform's (the
 * runners' schedules). A key opens the pages of its kind only, never the other's.
 */
export type ConsoleAudience = "organisation" | "platform";

/** The audience a live key signs in to, or null when it may open no page of the console. */
function audienceOf(record: ApiKeyRecord): ConsoleAudience | null {
  if (record.orgId !== null) return roleMay(record.role, "read") ? "organisation" : null;
  return isPlatformRole(record.role) && roleMay(record.role, "schedulesRead") ? "platform" : null;
}

/** Where a key's session starts: the executions for an organisation, the schedules for the platform. */
function homeOf(audience: ConsoleAudience): string {
  return audience === "organisation" ? CONSOLE_PATHS.home : CONSOLE_PATHS.schedules;
}

/** Pages allow no scripts, no framing and forms to this site only; inline styles only (as the board's sign-in). */
export const consoleHeaders = signInPageHeaders;

/** Form posts of the console, held to the same storable-text rule as JSON bodies (api/http.ts). */
export const consoleForm: RequestHandler[] = [
  express.urlencoded({ extended: false, limit: 65_536 }),
  storableBody,
];

/**
 * The console's sign-in: exchanges an organisation key (any role that may read) or a platform key
 * for a session cookie (HttpOnly, SameSite=Strict, Secure over TLS, 8 hours), with the board's
 * session store. An organisation's people land on its executions; platform people on the
 * platform's pages, never on an organisation's executions.
 */
export function consoleSignInRouter(keys: PgApiKeys, sessions: BoardSessions): Router {
  const router = Router();
  const signInPage = (alert?: string) =>
    layout({
      title: "Sign in",
      home: CONSOLE_PATHS.home,
      body: html`${alert ? html`<section class="alert" role="alert">${alert}</section>` : null}
<form method="post" action="${CONSOLE_PATHS.signIn}"><label for="key">API key</label>
<input id="key" name="key" type="password" autocomplete="off" required> <button type="submit">Sign in</button></form>`,
    });
  router.get(CONSOLE_PATHS.signIn, consoleHeaders, (_req, res) => {
    res.type("html").send(signInPage());
  });
  router.post(CONSOLE_PATHS.signIn, consoleHeaders, ...consoleForm, async (req, res, next) => {
    try {
      if (!sameOrigin(req)) {
        res.status(403).type("html").send(signInPage("Sign in from this page."));
        return;
      }
      const key = typeof req.body?.key === "string" ? req.body.key.trim() : "";
      const record = key === "" ? null : await keys.findActiveByHash(hashApiKey(key));
      const audience = record ? audienceOf(record) : null;
      if (!record || audience === null) {
        res
          .status(401)
          .type("html")
          .send(signInPage("That is not a live key of an organisation or the platform."));
        return;
      }
      const { token } = await sessions.open(record.id);
      res.setHeader("Set-Cookie", sessionCookie(req, token, CONSOLE_COOKIE));
      res.redirect(303, homeOf(audience));
    } catch (error) {
      next(error);
    }
  });
  router.post(CONSOLE_PATHS.signOut, consoleHeaders, ...consoleForm, async (req, res, next) => {
    try {
      const token = sessionToken(req, CONSOLE_COOKIE);
      const session = token === null ? null : await sessions.find(token);
      if (token !== null && session !== null && sameOrigin(req) && req.body?.csrf === session.csrf) {
        await sessions.close(token);
      }
      res.setHeader("Set-Cookie", sessionCookie(req, null, CONSOLE_COOKIE));
      res.redirect(303, CONSOLE_PATHS.signIn);
    } catch (error) {
      next(error);
    }
  });
  return router;
}

/**
 * Who is on the console: the session cookie's key, checked live on every request (a revoked key's
 * session ends at once). Without one, a page request is sent to the sign-in. A key of the other
 * audience is sent to its own pages (a GET) or refused (a form post). A form post must come from
 * this site and carry the session's CSRF token.
 */
export function consoleSession(
  keys: PgApiKeys,
  sessions: BoardSessions,
  /** `any`: a page for both kinds of key (the runners page: platform-wide operational facts). */
  audience: ConsoleAudience | "any" = "organisation",
): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const token = sessionToken(req, CONSOLE_COOKIE);
      const session = token === null ? null : await sessions.find(token);
      const record = session === null ? null : await keys.findActiveById(session.keyId);
      const theirs = record === null ? null : audienceOf(record);
      if (session === null || record === null || theirs === null) {
        if (token !== null) {
          await sessions.close(token);
          res.setHeader("Set-Cookie", sessionCookie(req, null, CONSOLE_COOKIE));
        }
        res.redirect(303, CONSOLE_PATHS.signIn);
        return;
      }
      if (audience !== "any" && theirs !== audience) {
        if (req.method === "GET") res.redirect(303, homeOf(theirs));
        else refusedPage(res, "This key may not change anything here.");
        return;
      }
      if (req.method !== "GET" && (!sameOrigin(req) || req.body?.csrf !== session.csrf)) {
        refusedPage(res, "A change must come from the console's own pages.");
        return;
      }
      res.locals.principal = toPrincipal(record);
      // An organisation's principal on its pages, a platform one (orgId null) on the platform's.
      res.locals.consoleUser = {
        principal: toPrincipal(record) as OrgPrincipal,
        csrf: session.csrf,
      } satisfies ConsoleUser;
      next();
    } catch (error) {
      next(error);
    }
  };
}

function refusedPage(res: Response, message: string): void {
  res
    .status(403)
    .type("html")
    .send(
      layout({
        title: "Refused",
        home: CONSOLE_PATHS.home,
        body: html`<section class="alert" role="alert">${message}</section>`,
      }),
    );
}
