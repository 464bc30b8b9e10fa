import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { PgApiKeys } from "../../store/pg-api-keys.js";
import { API_ERRORS } from "../api-error-codes.js";
import { anyPrincipalOf, authenticate, toPrincipal } from "../auth/authenticate.js";
import { roleMay } from "../auth/permissions.js";
import { apiError } from "../problem.js";
import { SIGN_IN_PATH } from "./admin-paths.js";
import { type BoardSessions, sameOrigin, sessionCookie, sessionToken } from "./board-session.js";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export function isMutating(req: Request): boolean {
  return !SAFE_METHODS.has(req.method);
}

/**
 * Who is on the board: a bearer platform key (scripts), or else a sign-in session cookie (people).
 * A session whose key was revoked since sign-in is closed here, on its next request. A browser
 * asking for a page without a session is redirected to the sign-in page; anything else gets 401.
 * Cookie sessions must prove same-origin on every mutating request (CSRF).
 */
export function boardAuthentication(keys: PgApiKeys, sessions: BoardSessions): RequestHandler {
  const bearer = authenticate(keys);
  return async (req: Request, res: Response, next: NextFunction) => {
    if (req.headers.authorization !== undefined) {
      bearer(req, res, next);
      return;
    }
    try {
      const token = sessionToken(req);
      const session = token === null ? null : await sessions.find(token);
      const record = session === null ? null : await keys.findActiveById(session.keyId);
      if (token !== null && session !== null && record === null) await sessions.close(token);
      if (record === null) {
        if (token !== null) res.setHeader("Set-Cookie", sessionCookie(req, null));
        if (req.method === "GET" && (req.headers.accept ?? "").includes("text/html")) {
          res.redirect(303, SIGN_IN_PATH);
          return;
        }
        next(
          apiError(
            API_ERRORS.UNAUTHENTICATED,
            `sign in at ${SIGN_IN_PATH}, or send a platform key as a Bearer header`,
          ),
        );
        return;
      }
      if (isMutating(req) && !sameOrigin(req)) {
        next(apiError(API_ERRORS.CSRF_REJECTED, "a board change must come from the board's own pages"));
        return;
      }
      res.locals.principal = toPrincipal(record);
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** A platform-operator's board is read-only: any mutating request is refused before Bull Board sees it. */
export function readOnlyGate(): RequestHandler {
  return (req, res, next) => {
    const { role } = anyPrincipalOf(res);
    if (isMutating(req) && !roleMay(role, "queuesWrite")) {
      next(
        apiError(
          API_ERRORS.QUEUES_READ_ONLY,
          `role ${role} may only look at the queues; changes need platform-admin`,
          {
            role,
            method: req.method,
          },
        ),
      );
      return;
    }
    next();
  };
}
