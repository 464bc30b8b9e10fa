import { createHash, randomBytes } from "node:crypto";
import type { Request } from "express";
import type { Redis } from "ioredis";

/** The session cookie of the Bull Board sign-in (README, "Bull Board"). */
export const BOARD_COOKIE = "tenor_board";
/** Where the cookie is sent: the sign-in pages and the board, nothing else. */
export const BOARD_COOKIE_PATH = "/admin";
/** A session ends 8 hours after sign-in, or at once when its key is revoked or the person signs out. */
export const BOARD_SESSION_TTL_SECONDS = 8 * 60 * 60;

/** What a session remembers: the platform key it was opened with and its CSRF token. */
export interface BoardSession {
  keyId: string;
  /** Sent back in the sign-out form; compared on every form post. */
  csrf: string;
}

/**
 * Board sessions in Redis under `<prefix>:board-session:<sha256 of the token>`, with a TTL: the
 * token itself lives only in the browser's HttpOnly cookie. Revocation is checked on every request
 * against the key's row in PostgreSQL (src/api/admin/board-auth.ts), not stored here.
 */
export class BoardSessions {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** Opens a session for `keyId`; returns the cookie token (shown once) and the session. */
  async open(keyId: string): Promise<{ token: string; session: BoardSession }> {
    const token = randomBytes(32).toString("base64url");
    const session: BoardSession = { keyId, csrf: randomBytes(24).toString("base64url") };
    await this.redis.set(this.key(token), JSON.stringify(session), "EX", BOARD_SESSION_TTL_SECONDS);
    return { token, session };
  }

  async find(token: string): Promise<BoardSession | null> {
    const raw = await this.redis.get(this.key(token));
    if (raw === null) return null;
    try {
      const value = JSON.parse(raw) as BoardSession;
      return typeof value.keyId === "string" && typeof value.csrf === "string" ? value : null;
    } catch {
      return null;
    }
  }

  async close(token: string): Promise<void> {
    await this.redis.del(this.key(token));
  }

  private key(token: string): string {
    return `${this.prefix}:board-session:${createHash("sha256").update(token).digest("hex")}`;
  }
}

/** Which cookie carries a session: the board's, or another sign-in's (the console's) with its own name and path. */
export interface SessionCookieSpec {
  name: string;
  path: string;
}

const BOARD_COOKIE_SPEC: SessionCookieSpec = { name: BOARD_COOKIE, path: BOARD_COOKIE_PATH };

/** The session token from the request's Cookie header, if any. */
export function sessionToken(req: Request, spec: SessionCookieSpec = BOARD_COOKIE_SPEC): string | null {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === spec.name) {
      const value = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{20,100}$/.test(value) ? value : null;
    }
  }
  return null;
}

/** Whether the request came over TLS (directly, or through a proxy that says so): the cookie is then Secure. */
export function overTls(req: Request): boolean {
  return req.secure || req.headers["x-forwarded-proto"] === "https";
}

/** The Set-Cookie value opening (token) or clearing (null) the session. */
export function sessionCookie(
  req: Request,
  token: string | null,
  spec: SessionCookieSpec = BOARD_COOKIE_SPEC,
): string {
  const attributes = [
    `${spec.name}=${token ?? ""}`,
    `Path=${spec.path}`,
    "HttpOnly",
    "SameSite=Strict",
    `Max-Age=${token === null ? 0 : BOARD_SESSION_TTL_SECONDS}`,
  ];
  if (overTls(req)) attributes.push("Secure");
  return attributes.join("; ");
}

/**
 * CSRF defence for cookie-authenticated requests that change something: the browser must say the
 * request comes from this same site (`Sec-Fetch-Site`), or its `Origin` must name this host. Bull
 * Board's own UI calls satisfy it; a cross-site form or script does not (and SameSite=Strict keeps
 * the cookie off such requests in the first place).
 */
export function sameOrigin(req: Request): boolean {
  const site = req.headers["sec-fetch-site"];
  if (typeof site === "string") return site === "same-origin";
  const origin = req.headers.origin;
  if (typeof origin !== "string") return false;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}
