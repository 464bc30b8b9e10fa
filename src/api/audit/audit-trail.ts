import { randomUUID } from "node:crypto";
import type { Request, RequestHandler, Response } from "express";
import type { Logger } from "../../observability/logger.js";
import type { AuditAction, PgAudit } from "../../store/pg-audit.js";
import type { Principal } from "../auth/authenticate.js";

/** The request's id: the caller's `X-Request-Id` when it is a plain token, else a new UUID; echoed back. */
export function requestId(): RequestHandler {
  return (req, res, next) => {
    const given = req.headers["x-request-id"];
    const id = typeof given === "string" && /^[A-Za-z0-9._:-]{1,100}$/.test(given) ? given : randomUUID();
    res.locals.requestId = id;
    res.setHeader("X-Request-Id", id);
    next();
  };
}

/**
 * Names the audit target once the handler knows it (a created resource's id): it replaces the one
 * {@link audited} read from the request. Without a call, the request's own target stands.
 */
export function nameAuditTarget(res: Response, target: string): void {
  res.locals.auditTarget = target;
}

/**
 * Records the request in the audit trail once it is answered, accepted or refused: mounted before
 * the route's guard, so a vote refused for its role is recorded too. A request that never
 * authenticated (401) names no actor and is not recorded. A failed audit write is logged, not
 * answered: the response has already left.
 */
export function audited(
  deps: { audit: PgAudit; logger: Logger },
  action: AuditAction,
  target: (req: Request) => string,
): RequestHandler {
  return (req, res, next) => {
    // Read now: Express resets req.params once the route is left, before "finish".
    const requested = target(req);
    res.on("finish", () => {
      const principal = res.locals.principal as Principal | undefined;
      if (!principal) return;
      const named = res.locals.auditTarget as string | undefined;
      const what = (named ?? requested).replaceAll("\u0000", "").slice(0, 500);
      deps.audit
        .append({
          actorKeyId: principal.keyId,
          subject: principal.subject,
          orgId: principal.orgId,
          role: principal.role,
          action,
          target: what,
          requestId: (res.locals.requestId as string | undefined) ?? null,
          outcome: outcomeOf(res),
        })
        .catch((error: unknown) => {
          deps.logger.error("audit write failed", { action, error: (error as Error).message });
        });
    });
    next();
  };
}

function outcomeOf(res: Response): string {
  if (res.statusCode < 400) return "accepted";
  return (res.locals.problemCode as string | undefined) ?? `HTTP_${res.statusCode}`;
}
