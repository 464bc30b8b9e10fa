import express, { type Request, type Response, Router } from "express";
import helmet from "helmet";
import type { PgApiKeys } from "../../store/pg-api-keys.js";
import { hashApiKey } from "../auth/api-key.js";
import { roleMay } from "../auth/permissions.js";
import { BULL_BOARD_PATH, SIGN_IN_PATH, SIGN_OUT_PATH } from "./admin-paths.js";
import { type BoardSessions, sameOrigin, sessionCookie, sessionToken } from "./board-session.js";

/** Headers of server-rendered sign-in pages (the board's and the console's): no scripts, no framing, forms to this site, inline styles only. */
export const signInPageHeaders = helmet({
  contentSecurityPolicy: {
    directives: {
      defaultSrc: ["'none'"],
      styleSrc: ["'unsafe-inline'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
    },
  },
});

/**
 * The board's sign-in for people (README, "Bull Board"): a form that exchanges a platform key for a
 * session cookie (HttpOnly, SameSite=Strict, Secure over TLS, 8 hours), and a sign-out form that
 * carries the session's CSRF token. Pages allow no scripts and no framing.
 */
export function signInRouter(keys: PgApiKeys, sessions: BoardSessions): Router {
  const router = Router();
  const headers = signInPageHeaders;
  const form = express.urlencoded({ extended: false, limit: 4096 });
  router.get(SIGN_IN_PATH, headers, (_req, res) => {
    res.type("html").send(page("Sign in", SIGN_IN_FORM));
  });
  router.post(SIGN_IN_PATH, headers, form, async (req: Request, res: Response, next) => {
    try {
      if (!sameOrigin(req)) {
        res
          .status(403)
          .type("html")
          .send(page("Sign in", `<p role="alert">Sign in from this page.</p>${SIGN_IN_FORM}`));
        return;
      }
      const key = typeof req.body?.key === "string" ? req.body.key.trim() : "";
      const record = key === "" ? null : await keys.findActiveByHash(hashApiKey(key));
      if (!record || !roleMay(record.role, "queuesRead")) {
        res
          .status(401)
          .type("html")
          .send(page("Sign in", `<p role="alert">That is not a live platform key.</p>${SIGN_IN_FORM}`));
        return;
      }
      const { token } = await sessions.open(record.id);
      res.setHeader("Set-Cookie", sessionCookie(req, token));
      res.redirect(303, BULL_BOARD_PATH);
    } catch (error) {
      next(error);
    }
  });
  router.get(SIGN_OUT_PATH, headers, async (req: Request, res: Response, next) => {
    try {
      const token = sessionToken(req);
      const session = token === null ? null : await sessions.find(token);
      if (session === null) {
        res.redirect(303, SIGN_IN_PATH);
        return;
      }
      res
        .type("html")
        .send(
          page(
            "Sign out",
            `<form method="post" action="${SIGN_OUT_PATH}"><input type="hidden" name="csrf" value="${session.csrf}">` +
              `<button type="submit">Sign out</button></form><p><a href="${BULL_BOARD_PATH}">Back to the queues</a></p>`,
          ),
        );
    } catch (error) {
      next(error);
    }
  });
  router.post(SIGN_OUT_PATH, headers, form, async (req: Request, res: Response, next) => {
    try {
      const token = sessionToken(req);
      const session = token === null ? null : await sessions.find(token);
      if (token === null || session === null || !sameOrigin(req) || req.body?.csrf !== session.csrf) {
        res
          .status(403)
          .type("html")
          .send(page("Sign out", '<p role="alert">Sign out from the board\'s own page.</p>'));
        return;
      }
      await sessions.close(token);
      res.setHeader("Set-Cookie", sessionCookie(req, null));
      res.redirect(303, SIGN_IN_PATH);
    } catch (error) {
      next(error);
    }
  });
  return router;
}

const SIGN_IN_FORM =
  `<form method="post" action="${SIGN_IN_PATH}">` +
  '<label for="key">Platform API key</label> ' +
  '<input id="key" name="key" type="password" autocomplete="off" required> ' +
  '<button type="submit">Sign in</button></form>';

function page(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Tenor queues: ${title}</title>` +
    "<style>body{font-family:sans-serif;margin:3rem auto;max-width:32rem}</style></head>" +
    `<body><h1>Tenor queues</h1>${body}</body></html>`
  );
}
